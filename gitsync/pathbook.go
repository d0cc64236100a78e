package gitsync

import (
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// pathBook remembers the path of each tree and blob a commit of this
// process wrote, until a roll-up takes it: a roll-up then names the
// objects of the commits' own packs without reading their trees again
// (rollSet.paths). Safe for concurrent use: a roll-up runs without the
// repository's lock.
type pathBook struct {
	mu sync.Mutex
	m  map[plumbing.Hash]string
}

// pathBookMax is the most paths a pathBook holds. Roll-ups take them
// long before (a commit writes a handful of objects, a roll-up comes
// every few dozen packs); what a roll-up never takes (the objects of a
// pack too large to roll up, packs a repack or git removed) fills it,
// and it is then emptied: a roll-up finds the paths forgotten through
// the trees.
const pathBookMax = 1 << 14

// add remembers names (object to path; "" for a root tree).
func (b *pathBook) add(names map[plumbing.Hash]string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.m)+len(names) > pathBookMax {
		b.m = nil
	}
	if len(names) > pathBookMax {
		return
	}
	if b.m == nil {
		b.m = make(map[plumbing.Hash]string, len(names))
	}
	for h, p := range names {
		b.m[h] = p
	}
}

// take returns h's path and forgets it.
func (b *pathBook) take(h plumbing.Hash) (string, bool) {
	if b == nil {
		return "", false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.m[h]
	if ok {
		delete(b.m, h)
	}
	return p, ok
}

// len is how many paths b holds.
func (b *pathBook) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.m)
}
