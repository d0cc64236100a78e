package gitsync

import "math"

// maxDiffSteps bounds the work of one Merge3 (lines compared and
// diagonals visited by its two line diffs); past it the file conflicts.
const maxDiffSteps = 64 << 20

// The constants of git's xdiff: when its search stops looking for the
// shortest diff, and which lines it sets aside before searching.
const (
	diffMinCost    = 256  // the fewest rounds before the furthest point is taken
	diffHeurCost   = 256  // the rounds after which a long snake is taken
	diffSnakeLen   = 20   // the length of a snake worth taking
	diffHeurFactor = 4    // how far along a snake taken must be, per round
	diffMaxEqLimit = 1024 // the most matches a line may have and count few
	diffScanWindow = 100  // how far around a many-matched line is looked at
	diffKeepRun    = 4    // it stays unless under 1 in this many of its run are many-matched
)

// hunk is one change of a line diff of base to a side: baseN lines of
// base from line base (0-based) became sideN lines of the side from line
// side.
type hunk struct {
	base, baseN, side, sideN int
}

// lineDiff diffs two texts given as line classes (equal lines, equal
// classes). It decides as git's xdiff does without --minimal (the diff
// git merge-file uses): common ends are trimmed, lines with no match or
// many matches on the other side are set aside, Myers' O(ND) algorithm
// splits the rest in the middle (taking a good-enough split when the
// shortest is far), and each group of changed lines is slid down as far
// as it goes unless it can line up with a change on the other side.
// So a merge built on it merges as git does. It gives up (ok false)
// once it has spent *steps down to zero.
func lineDiff(a, b []int, steps *int) (hunks []hunk, ok bool) {
	d := newLineDiffer(a, b, steps)
	d.trimEnds()
	d.setAside()
	if !d.compare(0, len(d.ia), 0, len(d.ib), false) {
		return nil, false
	}
	d.fa.compact(&d.fb)
	d.fb.compact(&d.fa)
	return d.hunks(), true
}

// lineDiffer is the state of one lineDiff.
type lineDiffer struct {
	fa, fb diffFile
	// start and suffix count the lines both texts start and end with.
	start, suffix int
	// ia and ib are the lines that take part in the O(ND) search (the
	// others are changed already), ca and cb their classes.
	ia, ib []int
	ca, cb []int
	// fwd and bwd are the furthest reaching points on each diagonal k
	// (a line of a minus a line of b), at k+diag.
	fwd, bwd []int
	diag     int
	maxCost  int
	steps    *int
}

// diffFile is one side of a diff: its lines' classes and which lines
// changed (line i at changed[i+1]; the ends stay false).
type diffFile struct {
	class   []int
	changed []bool
}

func newLineDiffer(a, b []int, steps *int) *lineDiffer {
	return &lineDiffer{
		fa:    diffFile{class: a, changed: make([]bool, len(a)+2)},
		fb:    diffFile{class: b, changed: make([]bool, len(b)+2)},
		steps: steps,
	}
}

// trimEnds sets aside the lines both texts start and end with.
func (d *lineDiffer) trimEnds() {
	a, b := d.fa.class, d.fb.class
	n := min(len(a), len(b))
	for d.start < n && a[d.start] == b[d.start] {
		d.start++
	}
	for d.suffix < n-d.start && a[len(a)-1-d.suffix] == b[len(b)-1-d.suffix] {
		d.suffix++
	}
}

// Kinds of lines, by how often they occur on the other side.
const (
	noMatch    = 0
	fewMatches = 1
	manyMatch  = 2
)

// setAside marks as changed the lines between the trimmed ends that
// cannot match (none on the other side) or are unlikely to (many matches
// on the other side, amid lines without match), and collects the others
// for the search.
func (d *lineDiffer) setAside() {
	count := func(class []int) map[int]int {
		m := map[int]int{}
		for _, c := range class {
			m[c]++
		}
		return m
	}
	inA, inB := count(d.fa.class), count(d.fb.class)
	d.ia, d.ca = d.fa.setAside(d.start, len(d.fa.class)-d.suffix, inB)
	d.ib, d.cb = d.fb.setAside(d.start, len(d.fb.class)-d.suffix, inA)
	n := len(d.ia) + len(d.ib) + 3
	d.fwd, d.bwd = make([]int, n), make([]int, n)
	d.diag = len(d.ib) + 1
	d.maxCost = max(bogoSqrt(n), diffMinCost)
}

// setAside is lineDiffer.setAside for the lines from to end of f, whose
// classes the other side holds other[class] times.
func (f *diffFile) setAside(from, end int, other map[int]int) (idx, class []int) {
	limit := min(bogoSqrt(len(f.class)), diffMaxEqLimit)
	kind := make([]uint8, len(f.class))
	for i := from; i < end; i++ {
		switch n := other[f.class[i]]; {
		case n == 0:
			kind[i] = noMatch
		case n >= limit:
			kind[i] = manyMatch
		default:
			kind[i] = fewMatches
		}
	}
	for i := from; i < end; i++ {
		if kind[i] == fewMatches || kind[i] == manyMatch && !amidUnmatched(kind, i, from, end-1) {
			idx = append(idx, i)
			class = append(class, f.class[i])
		} else {
			f.changed[i+1] = true
		}
	}
	return idx, class
}

// amidUnmatched reports whether the many-matched line i stands in a run
// of lines (up to diffScanWindow away, within first..last) that have no
// match or many, with lines without match on both sides of it, and few
// enough many-matched ones.
func amidUnmatched(kind []uint8, i, first, last int) bool {
	first, last = max(first, i-diffScanWindow), min(last, i+diffScanWindow)
	run := func(step, stop int) (none, many int) {
		many = 1
		for j := i + step; step < 0 && j >= stop || step > 0 && j <= stop; j += step {
			switch kind[j] {
			case noMatch:
				none++
			case manyMatch:
				many++
			default:
				return none, many
			}
		}
		return none, many
	}
	noneBefore, manyBefore := run(-1, first)
	if noneBefore == 0 {
		return false
	}
	noneAfter, manyAfter := run(1, last)
	if noneAfter == 0 {
		return false
	}
	none, many := noneBefore+noneAfter, manyBefore+manyAfter
	return many*diffKeepRun < many+none
}

// bogoSqrt is xdiff's rough square root: the least power of two whose
// square is above n.
func bogoSqrt(n int) int {
	r := 1
	for ; n > 0; n >>= 2 {
		r <<= 1
	}
	return r
}

// spend takes n steps off the budget and reports whether any are left.
func (d *lineDiffer) spend(n int) bool {
	*d.steps -= n
	return *d.steps >= 0
}

// compare marks the changed lines among the search's lines lo1..hi1 of
// a and lo2..hi2 of b: a common start and end are kept, and the rest is
// split where a shortest edit script (or, unless exact, a good-enough
// one) crosses the middle, each part compared in turn.
func (d *lineDiffer) compare(lo1, hi1, lo2, hi2 int, exact bool) bool {
	for {
		width := hi1 - lo1
		for lo1 < hi1 && lo2 < hi2 && d.ca[lo1] == d.cb[lo2] {
			lo1, lo2 = lo1+1, lo2+1
		}
		for lo1 < hi1 && lo2 < hi2 && d.ca[hi1-1] == d.cb[hi2-1] {
			hi1, hi2 = hi1-1, hi2-1
		}
		if !d.spend(1 + width - (hi1 - lo1)) {
			return false
		}
		switch {
		case lo1 == hi1:
			for ; lo2 < hi2; lo2++ {
				d.fb.changed[d.ib[lo2]+1] = true
			}
			return true
		case lo2 == hi2:
			for ; lo1 < hi1; lo1++ {
				d.fa.changed[d.ia[lo1]+1] = true
			}
			return true
		}
		s, ok := d.split(lo1, hi1, lo2, hi2, exact)
		if !ok || !d.compare(lo1, s.i1, lo2, s.i2, s.exactLo) {
			return false
		}
		lo1, lo2, exact = s.i1, s.i2, s.exactHi
	}
}

// split is where compare divides a box, and whether each part must be
// compared exactly.
type split struct {
	i1, i2           int
	exactLo, exactHi bool
}

// split finds where to divide the box lo1..hi1 × lo2..hi2: Myers'
// middle snake, searched from both corners at once. Unless exact, a
// search past diffHeurCost rounds takes a long snake far enough along,
// and one past maxCost rounds the furthest point either search reached.
func (d *lineDiffer) split(lo1, hi1, lo2, hi2 int, exact bool) (split, bool) {
	fwd, bwd, o := d.fwd, d.bwd, d.diag
	ca, cb := d.ca, d.cb
	dmin, dmax := lo1-hi2, hi1-lo2
	fmid, bmid := lo1-lo2, hi1-hi2
	odd := (fmid-bmid)&1 != 0
	fmin, fmax, bmin, bmax := fmid, fmid, bmid, bmid
	fwd[fmid+o] = lo1
	bwd[bmid+o] = hi1
	for cost := 1; ; cost++ {
		if !d.spend(2 * cost) {
			return split{}, false
		}
		gotSnake := false
		if fmin > dmin {
			fmin--
			fwd[fmin-1+o] = -1
		} else {
			fmin++
		}
		if fmax < dmax {
			fmax++
			fwd[fmax+1+o] = -1
		} else {
			fmax--
		}
		for k := fmax; k >= fmin; k -= 2 {
			i1 := fwd[k+1+o]
			if fwd[k-1+o] >= i1 {
				i1 = fwd[k-1+o] + 1
			}
			from := i1
			i2 := i1 - k
			for i1 < hi1 && i2 < hi2 && ca[i1] == cb[i2] {
				i1, i2 = i1+1, i2+1
			}
			if !d.spend(i1 - from) {
				return split{}, false
			}
			gotSnake = gotSnake || i1-from > diffSnakeLen
			fwd[k+o] = i1
			if odd && bmin <= k && k <= bmax && bwd[k+o] <= i1 {
				return split{i1, i2, true, true}, true
			}
		}
		if bmin > dmin {
			bmin--
			bwd[bmin-1+o] = math.MaxInt
		} else {
			bmin++
		}
		if bmax < dmax {
			bmax++
			bwd[bmax+1+o] = math.MaxInt
		} else {
			bmax--
		}
		for k := bmax; k >= bmin; k -= 2 {
			i1 := bwd[k+1+o] - 1
			if bwd[k-1+o] < bwd[k+1+o] {
				i1 = bwd[k-1+o]
			}
			from := i1
			i2 := i1 - k
			for i1 > lo1 && i2 > lo2 && ca[i1-1] == cb[i2-1] {
				i1, i2 = i1-1, i2-1
			}
			if !d.spend(from - i1) {
				return split{}, false
			}
			gotSnake = gotSnake || from-i1 > diffSnakeLen
			bwd[k+o] = i1
			if !odd && fmin <= k && k <= fmax && i1 <= fwd[k+o] {
				return split{i1, i2, true, true}, true
			}
		}
		if exact {
			continue
		}
		if gotSnake && cost > diffHeurCost {
			if s, ok := d.longSnake(lo1, hi1, lo2, hi2, fmin, fmax, bmin, bmax, cost); ok {
				return s, true
			}
		}
		if cost >= d.maxCost {
			return d.furthest(lo1, hi1, lo2, hi2, fmin, fmax, bmin, bmax), true
		}
	}
}

// longSnake looks, among the points the searches reached, for the one
// furthest along (less its distance from the middle diagonal) that ends
// (forward) or starts (backward) a snake of diffSnakeLen lines, and is
// far enough along for cost rounds.
func (d *lineDiffer) longSnake(lo1, hi1, lo2, hi2, fmin, fmax, bmin, bmax, cost int) (split, bool) {
	o, ca, cb := d.diag, d.ca, d.cb
	fmid, bmid := lo1-lo2, hi1-hi2
	best := 0
	var s split
	for k := fmax; k >= fmin; k -= 2 {
		i1 := d.fwd[k+o]
		i2 := i1 - k
		v := (i1 - lo1) + (i2 - lo2) - abs(k-fmid)
		if v <= diffHeurFactor*cost || v <= best ||
			i1 < lo1+diffSnakeLen || i1 >= hi1 || i2 < lo2+diffSnakeLen || i2 >= hi2 {
			continue
		}
		for n := 1; ca[i1-n] == cb[i2-n]; n++ {
			if n == diffSnakeLen {
				best, s = v, split{i1, i2, true, false}
				break
			}
		}
	}
	if best > 0 {
		return s, true
	}
	for k := bmax; k >= bmin; k -= 2 {
		i1 := d.bwd[k+o]
		i2 := i1 - k
		v := (hi1 - i1) + (hi2 - i2) - abs(k-bmid)
		if v <= diffHeurFactor*cost || v <= best ||
			i1 <= lo1 || i1 > hi1-diffSnakeLen || i2 <= lo2 || i2 > hi2-diffSnakeLen {
			continue
		}
		for n := 0; ca[i1+n] == cb[i2+n]; n++ {
			if n == diffSnakeLen-1 {
				best, s = v, split{i1, i2, false, true}
				break
			}
		}
	}
	return s, best > 0
}

// furthest is the point either search reached that is furthest from its
// corner.
func (d *lineDiffer) furthest(lo1, hi1, lo2, hi2, fmin, fmax, bmin, bmax int) split {
	o := d.diag
	fbest, fbest1 := -1, -1
	for k := fmax; k >= fmin; k -= 2 {
		i1 := min(d.fwd[k+o], hi1)
		i2 := i1 - k
		if hi2 < i2 {
			i1, i2 = hi2+k, hi2
		}
		if fbest < i1+i2 {
			fbest, fbest1 = i1+i2, i1
		}
	}
	bbest, bbest1 := math.MaxInt, math.MaxInt
	for k := bmax; k >= bmin; k -= 2 {
		i1 := max(lo1, d.bwd[k+o])
		i2 := i1 - k
		if i2 < lo2 {
			i1, i2 = lo2+k, lo2
		}
		if i1+i2 < bbest {
			bbest, bbest1 = i1+i2, i1
		}
	}
	if (hi1+hi2)-bbest < fbest-(lo1+lo2) {
		return split{fbest1, fbest - fbest1, true, false}
	}
	return split{bbest1, bbest - bbest1, false, true}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// A group is a run of changed lines of a diffFile, start to end
// (exclusive); an empty one (start == end) is the place before an
// unchanged line. Between two unchanged lines there is one group.
type group struct{ start, end int }

func (f *diffFile) isChanged(i int) bool { return f.changed[i+1] }

func (f *diffFile) firstGroup() group {
	g := group{}
	for f.isChanged(g.end) {
		g.end++
	}
	return g
}

// next moves g to the next group; false at the end of the file.
func (f *diffFile) next(g *group) bool {
	if g.end == len(f.class) {
		return false
	}
	g.start = g.end + 1
	for g.end = g.start; f.isChanged(g.end); g.end++ {
	}
	return true
}

// previous moves g to the group before; false at the start of the file.
func (f *diffFile) previous(g *group) bool {
	if g.start == 0 {
		return false
	}
	g.end = g.start - 1
	for g.start = g.end; f.isChanged(g.start - 1); g.start-- {
	}
	return true
}

// slideDown moves g one line down when the line after it equals its
// first line, joining the group it then touches.
func (f *diffFile) slideDown(g *group) bool {
	if g.end >= len(f.class) || f.class[g.start] != f.class[g.end] {
		return false
	}
	f.changed[g.start+1] = false
	f.changed[g.end+1] = true
	g.start, g.end = g.start+1, g.end+1
	for f.isChanged(g.end) {
		g.end++
	}
	return true
}

// slideUp moves g one line up when the line before it equals its last
// line, joining the group it then touches.
func (f *diffFile) slideUp(g *group) bool {
	if g.start == 0 || f.class[g.start-1] != f.class[g.end-1] {
		return false
	}
	g.start, g.end = g.start-1, g.end-1
	f.changed[g.start+1] = true
	f.changed[g.end+1] = false
	for f.isChanged(g.start - 1) {
		g.start--
	}
	return true
}

// compact slides every group of changed lines of f as far down as it
// goes (joining the groups it meets), then back up to the last place
// where it lines up with a group of changed lines of other, if any: the
// diff is the same size, and its hunks fall where git's do.
func (f *diffFile) compact(other *diffFile) {
	g, og := f.firstGroup(), other.firstGroup()
	for {
		if g.end != g.start {
			earliestEnd, matchEnd := f.slide(&g, other, &og)
			if g.end != earliestEnd && matchEnd >= 0 {
				for og.end == og.start {
					f.slideUp(&g)
					other.previous(&og)
				}
			}
		}
		if !f.next(&g) {
			return
		}
		other.next(&og)
	}
}

// slide moves g up and then down as far as it goes, until it stops
// growing, keeping og (other's group) in step; it returns g's highest
// end and its last end that lined up with a change of other (-1: none).
func (f *diffFile) slide(g *group, other *diffFile, og *group) (earliestEnd, matchEnd int) {
	for {
		size := g.end - g.start
		matchEnd = -1
		for f.slideUp(g) {
			other.previous(og)
		}
		earliestEnd = g.end
		if og.end > og.start {
			matchEnd = g.end
		}
		for f.slideDown(g) {
			other.next(og)
			if og.end > og.start {
				matchEnd = g.end
			}
		}
		if size == g.end-g.start {
			return earliestEnd, matchEnd
		}
	}
}

// hunks pairs the groups of changed lines of both files.
func (d *lineDiffer) hunks() []hunk {
	var out []hunk
	a, b := &d.fa, &d.fb
	for i1, i2 := 0, 0; i1 < len(a.class) || i2 < len(b.class); {
		if !a.isChanged(i1) && !b.isChanged(i2) {
			i1, i2 = i1+1, i2+1
			continue
		}
		h := hunk{base: i1, side: i2}
		for a.isChanged(i1) {
			i1++
		}
		for b.isChanged(i2) {
			i2++
		}
		h.baseN, h.sideN = i1-h.base, i2-h.side
		out = append(out, h)
	}
	return out
}
