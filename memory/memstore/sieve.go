package memstore

import (
	"cmp"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// A sieve finds the vector candidates of an index whose lists do not
// partition its vectors (ivf.scan): the builtin embedder's, whose hashed
// words and trigrams do not cluster. Its vectors are sparse in another
// way: a query's few words weigh most of its length, so that a chunk's
// cosine with it is mostly the sum over the query's heaviest components.
// The sieve holds each scope's int8 codes column by column (dimension
// major), a query scores every chunk it sees by those components alone,
// reading a few columns in sequence, keeps the best sieveKeep of these
// partial scores and scores them by their vectors, returning exact
// cosines. Its codes take the place of the arena's (a byte a component).
// Recall against the exact scan is measured by TestIVFRecall and
// BenchmarkSearch.
type sieve struct {
	dims   int
	scopes map[string]*columns
	acc    sync.Pool // *[]int32 partial scores of a scope's members
	// quantized is how many codes were made, not copied from the sieve
	// of the agent's previous index (see sieveSource); made is how many
	// scopes' columns were made, not taken from it whole.
	quantized, made int
}

// columns are the codes of one scope's vectors.
type columns struct {
	pos   []int32   // the scope's positions with a vector, ascending
	scale []float32 // by member: its code's scale (code × scale ≈ vector)
	// code[d*len(pos)+j] is component d of member j's code.
	code []int8
}

// Heavy components: a query is sieved by its largest components, the
// fewest whose squares sum to sieveEnergy of its squared length (its
// words' for a short query of the builtin embedder's). A query that
// needs more than sieveDims of them (a dense vector, an embedding
// model's) is scored by all its components, and the rerankWindow best
// of those codes by their vectors, as the lists' members are.
const (
	sieveEnergy = 0.9
	sieveDims   = 32
)

// sieveKeep is how many candidates by partial score of the visible
// chunks are scored by their vectors: a share of them, and enough for a
// small index to be scored exactly. On the benchmark corpus (~21 % of
// the chunks visible) the best 0.5 % by partial score hold 99.7 % of the
// exact 24 nearest at 100,000 chunks, 1.2 % (256) all of them; at 1M
// 0.26 % (1/384) hold them all, and exact scoring those candidates is
// most of the sieve's time (BenchmarkSearch reports the recall).
func sieveKeep(visible int) int { return max(visible/sieveShare, sieveMinKeep) }

const (
	sieveShare   = 384
	sieveMinKeep = 256
)

// newSieve returns the sieve of the vectors of length dims by scope,
// copying from src the codes it has (nil: none) and taking whole from it
// the columns of a scope whose vectors did not change: under appends an
// index run makes the columns of the scopes appended to, not of every
// scope.
func newSieve(dims int, vectors [][]float32, byUser map[string][]int, src *sieveSource) *sieve {
	sv := &sieve{dims: dims, scopes: map[string]*columns{}}
	for user, positions := range byUser {
		var pos []int32
		for _, p := range positions {
			if len(vectors[p]) == dims {
				pos = append(pos, int32(p))
			}
		}
		if len(pos) == 0 {
			continue
		}
		if c := src.kept(user, pos); c != nil {
			sv.scopes[user] = c
			continue
		}
		c, quantized := newColumns(dims, vectors, pos, func(p int32) (*columns, int) { return src.find(user, p) })
		sv.scopes[user] = c
		sv.quantized += quantized
		sv.made++
	}
	return sv
}

// kept returns the columns of user's scope in the previous sieve when
// they hold the codes of the vectors at pos and of no other, in order (a
// scope whose vectors did not change): those columns themselves when
// their positions are pos, else columns of pos sharing their codes
// (columns are never changed once made). It returns nil otherwise.
func (src *sieveSource) kept(user string, pos []int32) *columns {
	if src == nil {
		return nil
	}
	old := src.prev.scopes[user]
	if old == nil || len(old.pos) != len(pos) {
		return nil
	}
	moved := false
	for j, p := range pos {
		if c, at := src.find(user, p); c != old || at != j {
			return nil
		}
		moved = moved || old.pos[j] != p
	}
	if !moved {
		return old
	}
	return &columns{pos: pos, scale: old.scale, code: old.code}
}

// A sieveSource finds the codes of an index's vectors in the sieve of the
// agent's previous index, which kept them in the same arena.
type sieveSource struct {
	prev     *sieve
	prevSlot []int32 // by previous position: its vector's slot, -1 none
	slot     []int32 // by position: its vector's slot, -1 none
	at       []int32 // by slot: the member holding its code in its scope of prev
}

// newSieveSource returns the source of the codes of prev, an index whose
// vectors are slots of the arena the new index's (by position: slot) are.
func newSieveSource(prev *sieve, prevSlot, slot []int32, slots int) *sieveSource {
	src := &sieveSource{prev: prev, prevSlot: prevSlot, slot: slot, at: make([]int32, slots)}
	for _, c := range prev.scopes {
		for j, p := range c.pos {
			if s := prevSlot[p]; s >= 0 {
				src.at[s] = int32(j)
			}
		}
	}
	return src
}

// find returns the columns of user's scope in the previous sieve and the
// member there whose code is position p's vector's, nil when there is none.
func (src *sieveSource) find(user string, p int32) (*columns, int) {
	if src == nil {
		return nil, 0
	}
	old, s := src.prev.scopes[user], src.slot[p]
	if old == nil || s < 0 {
		return nil, 0
	}
	j := int(src.at[s])
	if j >= len(old.pos) || src.prevSlot[old.pos[j]] != s {
		return nil, 0
	}
	return old, j
}

// sieveBlock is how many vectors newColumns quantizes before writing
// their codes into the columns, a block of each column at a time.
const sieveBlock = 64

// newColumns returns the codes of the vectors at positions pos, in
// parallel by blocks, copying those that from finds (in a previous
// sieve), and how many it quantized.
func newColumns(dims int, vectors [][]float32, pos []int32, from func(p int32) (*columns, int)) (*columns, int) {
	n := len(pos)
	c := &columns{pos: pos, scale: make([]float32, n), code: make([]int8, dims*n)}
	blocks := (n + sieveBlock - 1) / sieveBlock
	var wg sync.WaitGroup
	var quantized atomic.Int64
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows := make([]int8, sieveBlock*dims)
			var olds [sieveBlock]*columns
			var ats [sieveBlock]int
			for b := range next {
				lo, hi := b*sieveBlock, min((b+1)*sieveBlock, n)
				for j := lo; j < hi; j++ {
					old, at := from(pos[j])
					olds[j-lo], ats[j-lo] = old, at
					if old != nil {
						c.scale[j] = old.scale[at]
						continue
					}
					quantize(rows[(j-lo)*dims:(j-lo+1)*dims], &c.scale[j], vectors[pos[j]])
					quantized.Add(1)
				}
				for d := range dims {
					col := c.code[d*n+lo : d*n+hi]
					for j := range col {
						if old := olds[j]; old != nil {
							col[j] = old.code[d*len(old.pos)+ats[j]]
						} else {
							col[j] = rows[j*dims+d]
						}
					}
				}
			}
		}()
	}
	for b := range blocks {
		next <- b
	}
	close(next)
	wg.Wait()
	return c, int(quantized.Load())
}

// heavy returns the components of qv the sieve scores by (see Heavy
// components), largest first, and whether they are a part of its
// non-zero ones.
func heavy(qv []float32) (dims []int, part bool) {
	var total float64
	for d, f := range qv {
		if f != 0 {
			dims = append(dims, d)
			total += float64(f) * float64(f)
		}
	}
	slices.SortFunc(dims, func(a, b int) int {
		return cmp.Or(cmp.Compare(qv[b]*qv[b], qv[a]*qv[a]), cmp.Compare(a, b))
	})
	var sum float64
	for k, d := range dims[:min(len(dims), sieveDims)] {
		sum += float64(qv[d]) * float64(qv[d])
		if sum >= sieveEnergy*total {
			return dims[:k+1], k+1 < len(dims)
		}
	}
	return dims, false
}

// nearest returns the n chunks of the scopes visible to user whose
// vectors are closest to qv among the sieve's candidates and the late
// positions (vectors filled in after the sieve was made), with their
// exact cosines.
func (sv *sieve) nearest(ix *agentIndex, qv []float32, n int, user string, late map[string][]int32) []scored {
	code := newQueryCode(qv)
	dims, part := heavy(qv)
	cands := topScored{n: rerankWindow(n)}
	if part {
		visible := 0
		for _, scope := range scopes(user) {
			if c := sv.scopes[scope]; c != nil {
				visible += len(c.pos)
			}
		}
		cands.n = sieveKeep(visible)
	}
	for _, scope := range scopes(user) {
		if c := sv.scopes[scope]; c != nil {
			sv.offer(c, dims, &code, &cands)
		}
	}
	top := topScored{n: n}
	for _, c := range cands.heap {
		top.offer(scored{c.pos, float64(dot(ix.vectors[c.pos], qv))})
	}
	for _, scope := range scopes(user) {
		for _, i := range late[scope] {
			top.offer(scored{int(i), float64(dot(ix.vectors[i], qv))})
		}
	}
	return top.heap
}

// offer offers to cands the members of c by their partial scores over
// the components dims.
func (sv *sieve) offer(c *columns, dims []int, q *queryCode, cands *topScored) {
	m := len(c.pos)
	p, _ := sv.acc.Get().(*[]int32)
	if p == nil {
		p = new([]int32)
	}
	if cap(*p) < m {
		*p = make([]int32, m)
	}
	acc := (*p)[:m]
	clear(acc)
	col := func(d int) []int8 { return c.code[d*m : (d+1)*m] }
	k := 0
	for ; k+4 <= len(dims); k += 4 {
		accumulate4(acc, col(dims[k]), col(dims[k+1]), col(dims[k+2]), col(dims[k+3]),
			q.wide[dims[k]], q.wide[dims[k+1]], q.wide[dims[k+2]], q.wide[dims[k+3]])
	}
	for ; k < len(dims); k++ {
		accumulate(acc, col(dims[k]), q.wide[dims[k]])
	}
	floor := math.Inf(-1) // the worst candidate's score once there are enough
	if len(cands.heap) == cands.n {
		floor = cands.heap[0].score
	}
	scale := c.scale[:len(acc)]
	for j, a := range acc {
		if s := float64(float32(a) * scale[j]); s >= floor {
			cands.offer(scored{int(c.pos[j]), s})
			if len(cands.heap) == cands.n {
				floor = cands.heap[0].score
			}
		}
	}
	sv.acc.Put(p)
}

// accumulate adds column c weighted by w to acc, of its length.
func accumulate(acc []int32, c []int8, w int32) {
	c = c[:len(acc)]
	for j, x := range c {
		acc[j] += int32(x) * w
	}
}

// accumulate4 adds four columns, weighted, to acc in one pass.
func accumulate4(acc []int32, c0, c1, c2, c3 []int8, w0, w1, w2, w3 int32) {
	c0, c1, c2, c3 = c0[:len(acc)], c1[:len(acc)], c2[:len(acc)], c3[:len(acc)]
	for j := range acc {
		acc[j] += int32(c0[j])*w0 + int32(c1[j])*w1 + int32(c2[j])*w2 + int32(c3[j])*w3
	}
}
