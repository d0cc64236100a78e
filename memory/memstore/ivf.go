package memstore

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"github.com/quirehq/quire/memory"
)

// An ivf is an approximate nearest-neighbour index over an agent's unit
// vectors: k-means centroids split the vectors into lists, and a query
// scores only the vectors of the lists whose centroids are nearest to it
// (probe of them), each list split by scope so that a user's search reads
// only the vectors it may see. How many lists a query reads is calibrated
// on the agent's own vectors when the centroids are trained (calibrate);
// recall against the exact scan is checked by TestIVFRecall and reported
// by BenchmarkSearch.
//
// Centroids outlive an Index call: a changed agent keeps its predecessor's
// centroids and the lists of its kept chunks, assigning only the fresh
// vectors, until it has grown or shrunk twofold since they were trained.
//
// The vectors themselves move to a vectorArena (arena.go): a query
// scores the members of the lists it reads by their int8 codes, then the
// best rerankWindow of them by their float32 vectors, and returns those
// exact cosines. An index whose lists do not partition its vectors (scan,
// see maxProbeShare) serves queries from a sieve (sieve.go) instead.
type ivf struct {
	dims      int
	centroids [][]float32
	trained   int     // vectors the centroids were trained on
	list      []int32 // by chunk position: its list, -1 none (pending)
	// members[user][l] are the positions of user's chunks in list l
	// ("" = agent-level), ascending; none when the index scans (its
	// sieve reads no lists).
	members map[string][][]int32
	probe   int
	scan    bool // the probe reads too many lists: the sieve serves
	arena   *vectorArena
	slot    []int32 // by chunk position: its vector's slot in arena, -1 none
	// segs is arena's segments when the index was made: a later version
	// of the agent's index may add to the arena while this one serves.
	segs []*arenaSeg
	// sieve finds the candidates of a scanning index (see sieve), late
	// the positions by user of the vectors filled in after it was made.
	sieve *sieve
	late  map[string][]int32
}

// maxProbeShare: an index whose calibrated probe reads more than
// 1/maxProbeShare of its lists does not serve from them (scan): its
// sieve does, which reads a few components of every visible chunk rather
// than most chunks whole. Vectors without clusters do that: the builtin
// embedder's hashed words and trigrams need about two thirds of the
// lists for recall 0.98, an embedding model's (or the benchmark's topic
// mixture) far fewer.
const maxProbeShare = 4

// ivfLists is the number of lists for n vectors: √n / 2, so that a list
// holds about 2√n vectors, between 16 and 1,024 lists.
func ivfLists(n int) int {
	return min(max(int(math.Sqrt(float64(n))/2), 16), 1024)
}

// newIVF returns the index of ix's vectors, nil when an exact scan serves
// them (at most vp.threshold vectors). prev is the index of the agent's
// previous version and carried, by position, the list each chunk had
// there (-1: fresh).
func newIVF(ix *agentIndex, vp vectorPlan, prev *ivf, carried []int32) *ivf {
	dims, n := vectorCount(ix.vectors)
	if n <= vp.threshold {
		return nil
	}
	x := &ivf{dims: dims, list: make([]int32, len(ix.vectors))}
	if prev != nil && prev.dims == dims && n <= 2*prev.trained && 2*n >= prev.trained {
		x.centroids, x.trained, x.probe = prev.centroids, prev.trained, prev.probe
		copy(x.list, carried)
		x.assign(ix.vectors)
	} else {
		x.centroids, x.trained = train(ix.vectors, dims, n), n
		for i := range x.list {
			x.list[i] = -1
		}
		x.assign(ix.vectors)
		x.probe = x.calibrate(ix.vectors)
	}
	// Lists that do not partition (see maxProbeShare): the index is
	// kept, its lists assigned, so that the next Index call does not train
	// it again, but its sieve serves queries.
	x.scan = x.probe*maxProbeShare > len(x.centroids)
	x.members = map[string][][]int32{}
	if !x.scan { // a sieve reads no lists
		for i, l := range x.list {
			if l >= 0 {
				x.add(ix.chunks[i].User, l, int32(i))
			}
		}
	}
	x.store(ix.vectors, n, prev, vp.dir)
	if x.scan {
		var src *sieveSource
		if prev != nil && prev.sieve != nil && prev.arena == x.arena {
			src = newSieveSource(prev.sieve, prev.slot, x.slot, x.arena.n)
		}
		x.sieve, x.late = newSieve(dims, ix.vectors, ix.byUser, src), map[string][]int32{}
	}
	return x
}

// store moves the vectors of the index's length into an arena, making
// them slices of it: prev's when it has one of their length, coded as
// this index needs (an index that scans reads its sieve's codes, not the
// arena's), and is not mostly garbage (see vectorArena.garbage), so that
// only the fresh vectors are written, else a new one.
func (x *ivf) store(vectors [][]float32, n int, prev *ivf, dir string) {
	coded := !x.scan
	if prev != nil && prev.arena != nil && prev.arena.dims == x.dims && prev.arena.coded == coded && !prev.arena.garbage(n) {
		x.arena = prev.arena
	} else {
		x.arena = newArena(x.dims, dir, coded)
	}
	x.slot = make([]int32, len(vectors))
	var todo []int
	for i, v := range vectors {
		x.slot[i] = -1
		if len(v) != x.dims {
			continue
		}
		if s, ok := x.arena.slotOf(v); ok {
			x.slot[i] = int32(s)
		} else {
			todo = append(todo, i)
		}
	}
	x.arena.put(vectors, todo, x.slot)
	x.segs = slices.Clone(x.arena.segs)
	leaveArena(prev, x.arena, vectors)
}

// leaveArena takes vectors off prev's arena when the new index keeps
// another one (kept; nil for none): prev's arena is unmapped once prev is
// dropped, so a vector still in it (one of another length, which no arena
// of the new index holds) is copied onto the heap.
func leaveArena(prev *ivf, kept *vectorArena, vectors [][]float32) {
	if prev != nil && prev.arena != nil && prev.arena != kept {
		prev.arena.heapVectors(vectors)
	}
}

// vectorCount returns the length of ix's vectors (that of the first one)
// and how many have it.
func vectorCount(vectors [][]float32) (dims, n int) {
	for _, v := range vectors {
		if v == nil {
			continue
		}
		if dims == 0 {
			dims = len(v)
		}
		if len(v) == dims {
			n++
		}
	}
	return dims, n
}

// add puts position pos of user into list l.
func (x *ivf) add(user string, l, pos int32) {
	lists := x.members[user]
	if lists == nil {
		lists = make([][]int32, len(x.centroids))
		x.members[user] = lists
	}
	lists[l] = append(lists[l], pos)
}

// assign gives every vector of the index's length without a list its
// nearest centroid, in parallel.
func (x *ivf) assign(vectors [][]float32) {
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	per := (len(vectors) + workers - 1) / workers
	for lo := 0; lo < len(vectors); lo += per {
		hi := min(lo+per, len(vectors))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				if x.list[i] < 0 && len(vectors[i]) == x.dims {
					x.list[i] = int32(nearestCentroid(x.centroids, vectors[i]))
				}
			}
		}()
	}
	wg.Wait()
}

// backfilled adds the vector just filled in at position pos of user.
// The caller holds the store's write lock.
func (x *ivf) backfilled(user string, pos int, v []float32) {
	if len(v) != x.dims || x.list[pos] >= 0 {
		return
	}
	l := int32(nearestCentroid(x.centroids, v))
	x.list[pos] = l
	if x.sieve != nil {
		x.late[user] = append(x.late[user], int32(pos))
		return
	}
	x.add(user, l, int32(pos))
}

func nearestCentroid(centroids [][]float32, v []float32) int {
	best, bestScore := 0, float32(math.Inf(-1))
	for c, cv := range centroids {
		if s := dot(cv, v); s > bestScore {
			best, bestScore = c, s
		}
	}
	return best
}

// trainIterations and trainSample bound k-means: Lloyd's iterations on at
// most trainSample vectors per list.
const (
	trainIterations = 8
	trainSample     = 40
)

// train returns the centroids of spherical k-means over a deterministic
// sample of the n vectors of length dims.
func train(vectors [][]float32, dims, n int) [][]float32 {
	k := ivfLists(n)
	r := rand.New(rand.NewPCG(uint64(n), uint64(dims)))
	var sample [][]float32
	for _, v := range vectors {
		if len(v) == dims {
			sample = append(sample, v)
		}
	}
	r.Shuffle(len(sample), func(i, j int) { sample[i], sample[j] = sample[j], sample[i] })
	k = min(k, len(sample))
	sample = sample[:min(len(sample), k*trainSample)]
	centroids := make([][]float32, k)
	for c := range centroids {
		centroids[c] = slices.Clone(sample[c])
	}
	owner := make([]int32, len(sample))
	for range trainIterations {
		x := &ivf{dims: dims, centroids: centroids, list: owner}
		for i := range owner {
			owner[i] = -1
		}
		x.assign(sample)
		centroids = recentre(sample, owner, centroids, dims)
	}
	return centroids
}

// recentre returns the normalised means of the sample's vectors by
// owner; a list left empty keeps its centroid.
func recentre(sample [][]float32, owner []int32, old [][]float32, dims int) [][]float32 {
	sums := make([][]float64, len(old))
	for i, v := range sample {
		s := sums[owner[i]]
		if s == nil {
			s = make([]float64, dims)
			sums[owner[i]] = s
		}
		for d, f := range v {
			s[d] += float64(f)
		}
	}
	next := make([][]float32, len(old))
	for c, s := range sums {
		if s == nil {
			next[c] = old[c]
			continue
		}
		var norm float64
		for _, f := range s {
			norm += f * f
		}
		v := make([]float32, dims)
		if norm > 0 {
			inv := 1 / math.Sqrt(norm)
			for d, f := range s {
				v[d] = float32(f * inv)
			}
		}
		next[c] = v
	}
	return next
}

// nearest returns the n chunks visible to user whose vectors are closest
// to qv among those of the probe lists nearest to qv (the sieve's
// candidates when the index scans): the rerankWindow best by their
// codes, of those the n best by their vectors, with their exact cosines.
func (x *ivf) nearest(ix *agentIndex, qv []float32, n int, user string) []scored {
	if len(qv) != x.dims {
		return nil
	}
	if x.sieve != nil {
		return x.sieve.nearest(ix, qv, n, user, x.late)
	}
	code := newQueryCode(qv)
	window := topScored{n: rerankWindow(n)}
	lists := x.listOrder(qv)[:x.probe]
	for _, scope := range scopes(user) {
		members := x.members[scope]
		if members == nil {
			continue
		}
		for _, l := range lists {
			for _, i := range members[l.pos] {
				if s := x.slot[i]; s >= 0 {
					window.offer(scored{int(i), approx(x.segs, x.dims, s, &code)})
				} else { // backfilled since, on the heap
					window.offer(scored{int(i), float64(dot(ix.vectors[i], qv))})
				}
			}
		}
	}
	top := topScored{n: n}
	for _, c := range window.heap {
		top.offer(scored{c.pos, float64(dot(ix.vectors[c.pos], qv))})
	}
	return top.heap
}

// rerankWindow is how many of a query's candidates by code are scored by
// their vectors for its n nearest: a code's dot product is off by about
// 10⁻³, so the n nearest are among the 2n + 16 best codes but for a
// near-tie at the last place (the recall is measured by TestIVFRecall
// and BenchmarkSearch).
func rerankWindow(n int) int { return 2*n + 16 }

// scopes returns the scopes a user sees: agent-level memory and theirs.
func scopes(user string) []string {
	if user == "" {
		return []string{""}
	}
	return []string{"", user}
}

// Calibration: the probe is the fewest lists for which the exact
// calibrationN nearest neighbours of calibrationQueries of the agent's own
// vectors (a deterministic sample, the vector itself not counted) lie in
// the lists read for recall ≥ calibrationRecall. Real queries are scoped
// to a user and are not chunks: the margin over the 0.98 asked of the
// index covers that, and TestIVFRecall checks it on queries.
const (
	calibrationQueries = 64
	calibrationN       = 24
	calibrationRecall  = 0.995
	calibrationCosine  = 0.4
)

// calibrate returns the probe (see Calibration) for x over vectors.
func (x *ivf) calibrate(vectors [][]float32) int {
	var sample []int
	for i, v := range vectors {
		if len(v) == x.dims {
			sample = append(sample, i)
		}
	}
	r := rand.New(rand.NewPCG(uint64(len(sample)), 11))
	r.Shuffle(len(sample), func(i, j int) { sample[i], sample[j] = sample[j], sample[i] })
	sample = sample[:min(len(sample), calibrationQueries)]
	// ranks[q][j]: where the list of query q's j-th neighbour comes in
	// the order of the lists nearest to q.
	ranks := make([][]int, len(sample))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for q := range next {
				ranks[q] = x.neighbourRanks(vectors, x.perturbed(vectors[sample[q]], uint64(q)))
			}
		}()
	}
	for q := range sample {
		next <- q
	}
	close(next)
	wg.Wait()
	counts := make([]int, len(x.centroids)+1)
	total := 0
	for _, rs := range ranks {
		for _, rank := range rs {
			counts[rank+1]++
			total++
		}
	}
	found := 0
	for p := 1; p <= len(x.centroids); p++ {
		found += counts[p]
		if float64(found) >= calibrationRecall*float64(total) {
			return p
		}
	}
	return len(x.centroids)
}

// perturbed returns a unit vector of cosine calibrationCosine with the
// unit vector v, in a random direction: a query near a chunk, not on it.
func (x *ivf) perturbed(v []float32, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 13))
	g := make([]float32, len(v))
	var along float64
	for d := range g {
		g[d] = float32(r.NormFloat64())
		along += float64(g[d] * v[d])
	}
	for d := range g { // orthogonal to v, then unit length
		g[d] -= float32(along) * v[d]
	}
	memory.Normalize(g)
	c := float32(calibrationCosine)
	s := float32(math.Sqrt(1 - calibrationCosine*calibrationCosine))
	q := make([]float32, len(v))
	for d := range q {
		q[d] = c*v[d] + s*g[d]
	}
	return q
}

// neighbourRanks returns, for the exact calibrationN nearest neighbours
// of qv, the rank of their list among the lists by nearness to qv.
func (x *ivf) neighbourRanks(vectors [][]float32, qv []float32) []int {
	top := topScored{n: calibrationN}
	for i, v := range vectors {
		if len(v) == x.dims {
			top.offer(scored{i, float64(dot(v, qv))})
		}
	}
	rankOf := make([]int, len(x.centroids))
	for rank, l := range x.listOrder(qv) {
		rankOf[l.pos] = rank
	}
	var out []int
	for _, h := range top.heap {
		out = append(out, rankOf[x.list[h.pos]])
	}
	return out
}

// listOrder returns the lists by the nearness of their centroid to qv,
// nearest first.
func (x *ivf) listOrder(qv []float32) []scored {
	lists := make([]scored, len(x.centroids))
	for c, cv := range x.centroids {
		lists[c] = scored{c, float64(dot(cv, qv))}
	}
	slices.SortFunc(lists, func(a, b scored) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return a.pos - b.pos
	})
	return lists
}
