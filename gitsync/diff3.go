package gitsync

import (
	"bytes"
	"time"

	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

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

// diffTimeout bounds one line diff; past it the diff is coarser (whole
// regions replaced), which can only turn a clean merge into a conflict,
// never merge wrongly.
const diffTimeout = 2 * time.Second

// Merge3 merges two texts that both descend from base, line by line (the
// diff3 algorithm): a region changed on one side only takes that side's
// lines; a region both changed the same way takes them once; a region
// both changed differently is a conflict, and the merged text then holds
// ours for it. Lines end with "\n" (a last line without one is a line).
func Merge3(base, ours, theirs []byte) ([]byte, []TextConflict) {
	b, o, t := splitLines(base), splitLines(ours), splitLines(theirs)
	mo, mt := matchLines(base, ours, len(b)), matchLines(base, theirs, len(b))
	var out bytes.Buffer
	var conflicts []TextConflict
	i, jo, jt := 0, 0, 0
	for i < len(b) || jo < len(o) || jt < len(t) {
		if i < len(b) && mo[i] == jo && mt[i] == jt {
			out.WriteString(b[i]) // stable: unchanged on both sides
			i, jo, jt = i+1, jo+1, jt+1
			continue
		}
		// The unstable chunk runs to the next base line both sides kept.
		l := i
		for l < len(b) && (mo[l] < 0 || mt[l] < 0) {
			l++
		}
		eo, et := len(o), len(t)
		if l < len(b) {
			eo, et = mo[l], mt[l]
		}
		cb, co, ct := b[i:l], o[jo:eo], t[jt:et]
		switch {
		case equalLines(co, cb):
			writeLines(&out, ct)
		case equalLines(ct, cb), equalLines(co, ct):
			writeLines(&out, co)
		default:
			writeLines(&out, co)
			conflicts = append(conflicts, TextConflict{
				Base:   LineRange{i + 1, l},
				Ours:   LineRange{jo + 1, eo},
				Theirs: LineRange{jt + 1, et},
			})
		}
		i, jo, jt = l, eo, et
	}
	return out.Bytes(), conflicts
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

// matchLines returns, for each of the n lines of base, the index of the
// line of other it is kept as in a line diff (-1: removed or changed).
// Matches are increasing.
func matchLines(base, other []byte, n int) []int {
	m := make([]int, n)
	for i := range m {
		m[i] = -1
	}
	i, j := 0, 0
	for _, d := range diff.DoWithTimeout(string(base), string(other), diffTimeout) {
		k := len(splitLines([]byte(d.Text)))
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			for x := 0; x < k && i < n; x++ {
				m[i] = j
				i, j = i+1, j+1
			}
		case diffmatchpatch.DiffDelete:
			i += k
		case diffmatchpatch.DiffInsert:
			j += k
		}
	}
	return m
}
