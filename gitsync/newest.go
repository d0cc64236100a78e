package gitsync

// newest keeps the newest value put at each key, up to a limit in all
// (in the unit of the sizes put with them: bytes, tree entries); past
// it, it starts again empty. A value replaced is let go of, so it holds what
// the keys are now, not their history, and writes that come back to each
// key in turn (appends to a thousand users' logs) find it, where an LRU
// that the keys outgrow finds none. A value of more than half the limit
// is not kept. Not safe for concurrent use; the zero value is ready.
type newest[K comparable, V any] struct {
	m    map[K]sized[V]
	size int
}

// sized is a value and its size.
type sized[V any] struct {
	v V
	n int
}

// get returns the value at k.
func (c *newest[K, V]) get(k K) (V, bool) {
	s, ok := c.m[k]
	return s.v, ok
}

// put keeps v, of size n, at k, within limit. It returns the value it
// replaced, and whether it let every value go to make room (emptied).
func (c *newest[K, V]) put(k K, v V, n, limit int) (old V, replaced, emptied bool) {
	if s, ok := c.m[k]; ok {
		c.size -= s.n
		delete(c.m, k)
		old, replaced = s.v, true
	}
	if n > limit/2 {
		return old, replaced, false
	}
	if c.m == nil || c.size+n > limit {
		emptied = c.m != nil && len(c.m) > 0
		c.m, c.size = make(map[K]sized[V]), 0
	}
	c.m[k] = sized[V]{v, n}
	c.size += n
	return old, replaced, emptied
}
