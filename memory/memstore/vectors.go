package memstore

import (
	"path/filepath"

	"github.com/quirehq/quire/memory"
)

// index makes ix's search structures beside the text index, once its
// chunks and vectors are in place: the owner of each chunk, for scoping
// the text side by array lookup, and the approximate vector index (see
// newIVF for vp, prev and carried).
func (ix *agentIndex) index(vp vectorPlan, prev *ivf, carried []int32) {
	ix.owner = make([]int32, len(ix.chunks))
	ix.users = map[string]int32{}
	for user, positions := range ix.byUser {
		if user == "" {
			continue
		}
		id := int32(len(ix.users) + 1)
		ix.users[user] = id
		for _, i := range positions {
			ix.owner[i] = id
		}
	}
	ix.ann = newIVF(ix, vp, prev, carried)
	if ix.ann == nil {
		leaveArena(prev, nil, ix.vectors)
	}
}

// vectorPlan is how a store keeps an agent's vectors: exactly scanned up
// to threshold of them, else in an approximate index whose vectors are
// mapped from a file in dir ("" is the temporary directory).
type vectorPlan struct {
	threshold int
	dir       string
}

// vectorPlan returns the store's plan (Options): the exact-scan threshold,
// and the embedding cache's directory for the mapped vectors, so that
// they are on disk beside the cache, not in a temporary directory that
// may be memory (tmpfs).
func (s *Store) vectorPlan() vectorPlan {
	vp := vectorPlan{threshold: s.opts.ExactVectors}
	switch {
	case s.opts.ExactVectors < 0:
		vp.threshold = 0
	case s.opts.ExactVectors == 0:
		vp.threshold = memory.ExactVectorChunks
	}
	if s.opts.CacheFile != "" {
		vp.dir = filepath.Dir(s.opts.CacheFile)
	}
	return vp
}

// scored is a chunk position and its cosine similarity to a query.
type scored struct {
	pos   int
	score float64
}

// nearest returns the n chunks visible to user whose vectors are closest
// to qv: exactly, or through the approximate index when ix has one.
func (ix *agentIndex) nearest(qv []float32, n int, user string) []scored {
	if ix.ann != nil {
		return ix.ann.nearest(ix, qv, n, user)
	}
	top := topScored{n: n}
	for _, scope := range scopes(user) {
		for _, i := range ix.byUser[scope] {
			if v := ix.vectors[i]; len(v) == len(qv) { // else pending, or of another embedder
				top.offer(scored{i, float64(dot(v, qv))})
			}
		}
	}
	return top.heap
}

// topScored keeps the n best of the scores offered to it: a min-heap,
// the worst at heap[0]; of equal scores the lower position is better.
type topScored struct {
	n    int
	heap []scored
}

func worse(a, b scored) bool { return a.score < b.score || (a.score == b.score && a.pos > b.pos) }

func (t *topScored) offer(c scored) {
	heap := t.heap
	if len(heap) < t.n {
		heap = append(heap, c)
		for k := len(heap) - 1; k > 0; {
			p := (k - 1) / 2
			if !worse(heap[k], heap[p]) {
				break
			}
			heap[k], heap[p] = heap[p], heap[k]
			k = p
		}
		t.heap = heap
		return
	}
	if !worse(heap[0], c) {
		return
	}
	heap[0] = c
	for k := 0; ; {
		l, m := 2*k+1, k
		if l < len(heap) && worse(heap[l], heap[m]) {
			m = l
		}
		if r := l + 1; r < len(heap) && worse(heap[r], heap[m]) {
			m = r
		}
		if m == k {
			return
		}
		heap[k], heap[m] = heap[m], heap[k]
		k = m
	}
}

// dot returns the dot product of two vectors of equal length.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}
