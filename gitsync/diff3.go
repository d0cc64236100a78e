package gitsync

import "bytes"

// LineRange is a 1-based, inclusive range of lines; an empty range (End <
// Start) is the point before line Start.
type LineRange struct {
	Start, End int
}

// TextConflict is one region of a three-way merge that both sides changed
// differently: the lines it covers in each side.
type TextConflict struct {
	Base, Ours, Theirs LineRange
}

// Merge3 merges two texts that both descend from base, line by line, as
// git merge-file does: each side is diffed against base (see lineDiff);
// a change of one side that neither overlaps nor touches a change of the
// other takes that side's lines; changes that do are one conflict,
// unless both sides made it the same. The merged text holds ours for a
// conflict; a conflict is the whole region (git's markers narrow it to
// the lines that differ). Lines end with "\n" (a last line without one
// is a line). Texts too different to diff within maxDiffSteps are one
// conflict.
func Merge3(base, ours, theirs []byte) ([]byte, []TextConflict) {
	return merge3(base, ours, theirs, maxDiffSteps)
}

// merge3 is Merge3 with a budget of steps for its diffs.
func merge3(base, ours, theirs []byte, steps int) ([]byte, []TextConflict) {
	b, o, t := splitLines(base), splitLines(ours), splitLines(theirs)
	cs := lineClasses(b, o, t)
	cb, co, ct := cs[0], cs[1], cs[2]
	oh, ok1 := lineDiff(cb, co, &steps)
	th, ok2 := lineDiff(cb, ct, &steps)
	switch {
	case !ok1 || !ok2:
		whole := TextConflict{Base: LineRange{1, len(b)}, Ours: LineRange{1, len(o)}, Theirs: LineRange{1, len(t)}}
		return bytes.Clone(ours), []TextConflict{whole}
	case len(oh) == 0:
		return bytes.Clone(theirs), nil
	case len(th) == 0:
		return bytes.Clone(ours), nil
	}
	same := func(x, y hunk) bool {
		return equalLines(o[x.side:x.side+x.sideN], t[y.side:y.side+y.sideN])
	}
	return assemble(o, t, mergeRegions(oh, th, same, len(b), len(o), len(t)))
}

// assemble writes ours with the regions that take theirs replaced by
// theirs, and lists the regions that conflict.
func assemble(o, t []string, rs []region) ([]byte, []TextConflict) {
	var out bytes.Buffer
	var conflicts []TextConflict
	next := 0 // the first line of ours not yet written
	for _, r := range rs {
		switch {
		case r.take == takeTheirs:
			writeLines(&out, o[next:r.ours])
			writeLines(&out, t[r.theirs:r.theirs+r.theirsN])
			next = r.ours + r.oursN
		case r.take == conflicting && !sameChange(o[r.ours:r.ours+r.oursN], t[r.theirs:r.theirs+r.theirsN]):
			conflicts = append(conflicts, TextConflict{
				Base:   LineRange{r.base + 1, r.base + r.baseN},
				Ours:   LineRange{r.ours + 1, r.ours + r.oursN},
				Theirs: LineRange{r.theirs + 1, r.theirs + r.theirsN},
			})
		}
	}
	writeLines(&out, o[next:])
	return out.Bytes(), conflicts
}

// lineClasses numbers the lines of texts: equal lines, equal numbers.
func lineClasses(texts ...[]string) [][]int {
	ids := map[string]int{}
	out := make([][]int, len(texts))
	for i, lines := range texts {
		out[i] = make([]int, len(lines))
		for j, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i][j] = id
		}
	}
	return out
}

// sameChange reports whether a conflicting region is resolved after all:
// both sides hold the same lines there. One empty on either side stays
// a conflict, as in git.
func sameChange(ours, theirs []string) bool {
	return len(ours) > 0 && len(theirs) > 0 && equalLines(ours, theirs)
}

// What a region of a merge takes.
const (
	conflicting = iota
	takeOurs
	takeTheirs
)

// region is a stretch of a merge: baseN lines of base from line base
// (0-based), oursN of ours from ours and theirsN of theirs from theirs,
// and which side it takes.
type region struct {
	take                                      int
	base, baseN, ours, oursN, theirs, theirsN int
}

// mergeRegions walks the hunks of ours and of theirs (diffs of base to
// each) in order, as git's xdl_do_merge does: a hunk that ends before
// the other side's next one begins is taken; hunks that overlap or touch
// are a conflict, unless they are the same change (same reports whether
// two hunks put the same lines in); a region that touches the one before
// joins it (a conflict if they take different sides).
func mergeRegions(oh, th []hunk, same func(x, y hunk) bool, nBase, nOurs, nTheirs int) []region {
	var rs []region
	add := func(r region) {
		k := len(rs) - 1
		if k < 0 || r.ours > rs[k].ours+rs[k].oursN && r.theirs > rs[k].theirs+rs[k].theirsN {
			rs = append(rs, r)
			return
		}
		last := &rs[k]
		if r.take != last.take {
			last.take = conflicting
		}
		last.baseN = r.base + r.baseN - last.base
		last.oursN = r.ours + r.oursN - last.ours
		last.theirsN = r.theirs + r.theirsN - last.theirs
	}
	for len(oh) > 0 && len(th) > 0 {
		x, y := oh[0], th[0]
		if x.base+x.baseN < y.base {
			add(region{takeOurs, x.base, x.baseN, x.side, x.sideN, y.side - y.base + x.base, x.baseN})
			oh = oh[1:]
			continue
		}
		if y.base+y.baseN < x.base {
			add(region{takeTheirs, y.base, y.baseN, x.side - x.base + y.base, y.baseN, y.side, y.sideN})
			th = th[1:]
			continue
		}
		if x.base != y.base || x.baseN != y.baseN || !same(x, y) {
			add(overlap(x, y))
		}
		if x.base+x.baseN >= y.base+y.baseN {
			th = th[1:]
		}
		if y.base+y.baseN >= x.base+x.baseN {
			oh = oh[1:]
		}
	}
	for _, x := range oh {
		add(region{takeOurs, x.base, x.baseN, x.side, x.sideN, x.base + nTheirs - nBase, x.baseN})
	}
	for _, y := range th {
		add(region{takeTheirs, y.base, y.baseN, y.base + nOurs - nBase, y.baseN, y.side, y.sideN})
	}
	return rs
}

// overlap is the conflict of two hunks that overlap or touch: the base
// lines either covers, and each side's lines for them.
func overlap(x, y hunk) region {
	r := region{take: conflicting, base: x.base, ours: x.side, theirs: y.side}
	if off := x.base - y.base; off > 0 {
		r.base, r.ours = r.base-off, r.ours-off
	} else {
		r.theirs += off
	}
	r.baseN = x.base + x.baseN - r.base
	r.oursN = x.side + x.sideN - r.ours
	r.theirsN = y.side + y.sideN - r.theirs
	if end := (x.base + x.baseN) - (y.base + y.baseN); end < 0 {
		r.baseN, r.oursN = r.baseN-end, r.oursN-end
	} else {
		r.theirsN += end
	}
	return r
}

// splitLines splits s after every "\n".
func splitLines(s []byte) []string {
	var out []string
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, string(s))
			break
		}
		out = append(out, string(s[:i+1]))
		s = s[i+1:]
	}
	return out
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func writeLines(b *bytes.Buffer, ls []string) {
	for _, l := range ls {
		b.WriteString(l)
	}
}
