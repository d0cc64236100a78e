package o200k

import (
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// runeOffsets returns the offset of every rune of s, and len(s).
func runeOffsets(s string) []int {
	var offs []int
	for i := range s {
		offs = append(offs, i)
	}
	return append(offs, len(s))
}

// checkSpliced compares CountSpliced, with every window from one byte,
// with counting the spliced text.
func checkSpliced(t *testing.T, c *Counter, s string, head int, insert string, tail int) {
	t.Helper()
	_, x, err := c.CountIndexed(s)
	if err != nil || x == nil {
		t.Fatalf("CountIndexed(%.40q…): %v, %v", s, x, err)
	}
	want, _ := c.Count(s[:head] + insert + s[tail:])
	for _, w := range []int{1, 2, 3, 5, 8, 13, 21, spliceWindow} {
		got, err := x.spliced(c, head, insert, tail, w)
		if err != nil || got != want {
			t.Fatalf("spliced %q + %q + %q (window %d) = %d, %v; want %d", s[:head], insert, s[tail:], w, got, err, want)
		}
	}
}

// spliceAlphabet is what the splice tests build texts of: the characters
// the split pattern tells apart, long runs of upper case and of white
// space, line breaks, contractions, digits and marks.
var spliceAlphabet = []string{"a", "Z", "0", " ", "  ", "\n", "\r\n", "\t", "'s", "'LL", "'", ".", "-", "/", "é", "É", "中", "\u0301",
	"٣", "\u00a0", "\u3000", "🐙", "ſ", "\x7f", "ABCDEFGHIJ", "          ", "\n\n\n", "word ", " The", "1234567", "!!!",
	"s", "t", "re", "LL", "ABCDEFGHIJKLMNOPQRST", "中中", "ʰ", "                    "}

// spliceText is n random strings of spliceAlphabet.
func spliceText(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(spliceAlphabet[r.IntN(len(spliceAlphabet))])
	}
	return b.String()
}

// Splicing counts exactly what counting the spliced text counts: random
// texts of the characters the split pattern tells apart (long runs of
// upper case, of white space, line breaks, contractions, digits, marks),
// cut at random runes, with random text between.
func TestCountSplicedMatchesCount(t *testing.T) {
	c := mustNew(t)
	r := rand.New(rand.NewPCG(5, 6))
	for range 4000 {
		s := spliceText(r, r.IntN(80))
		offs := runeOffsets(s)
		head, tail := offs[r.IntN(len(offs))], offs[r.IntN(len(offs))]
		if head > tail {
			head, tail = tail, head
		}
		checkSpliced(t, c, s, head, spliceText(r, r.IntN(4)), tail)
	}
}

// A truncated file: the head and tail of a long text around a marker.
func TestCountSplicedFile(t *testing.T) {
	data, err := os.ReadFile("../../../examples/agents/concierge/SOUL.md")
	if err != nil {
		t.Fatal(err)
	}
	c := mustNew(t)
	s := string(data)
	marker := "\n[...truncated, read SOUL.md for full content...]\n(SOUL.md: kept 14,000 + 4,000 of 25,215 chars)\n"
	offs := runeOffsets(s)
	for _, cut := range [][2]int{{0, 0}, {0, len(offs) - 1}, {100, 20000}, {14000, 21000}, {len(offs) - 1, len(offs) - 1}, {5000, 5001}} {
		checkSpliced(t, c, s, offs[cut[0]], marker, offs[cut[1]])
		checkSpliced(t, c, s, offs[cut[0]], "", offs[cut[1]])
	}
}

func TestCountSplicedRejectsCutRunes(t *testing.T) {
	c := mustNew(t)
	_, x, _ := c.CountIndexed("héllo")
	for _, r := range [][2]int{{2, 3}, {-1, 2}, {3, 2}, {0, 9}} {
		if _, err := c.CountSpliced(x, r[0], "", r[1]); err == nil {
			t.Errorf("CountSpliced(%d, %d) of %q: no error", r[0], r[1], x.Text())
		}
	}
	if _, x, _ := c.CountIndexed("\xff"); x != nil {
		t.Error("CountIndexed indexed invalid UTF-8")
	}
}

func FuzzCountSpliced(f *testing.F) {
	f.Add("Hello WORLD  \n\n it's", 3, "[marker]\n", 10)
	c := mustNew(f)
	f.Fuzz(func(t *testing.T, s string, head int, insert string, tail int) {
		if !utf8.ValidString(s) {
			return
		}
		offs := runeOffsets(s)
		head, tail = offs[uint(head)%uint(len(offs))], offs[uint(tail)%uint(len(offs))]
		if head > tail {
			head, tail = tail, head
		}
		checkSpliced(t, c, s, head, insert, tail)
	})
}

// positions returns every position the split of s reaches, and len(s).
func positions(s string) []int {
	sp := &splitter{}
	sp.reset(s)
	var out []int
	for i := 0; i < len(s); {
		out = append(out, i)
		if e := sp.next(i); e >= 0 {
			i = e
		} else {
			i += runeLen(s[i])
		}
	}
	return append(out, len(s))
}

// upTo returns the elements of ps that are at most limit.
func upTo(ps []int, limit int) []int {
	for i, p := range ps {
		if p > limit {
			return ps[:i]
		}
	}
	return ps
}

// The bounds the splice relies on hold for the split itself: a text
// changed after head is split as the original up to safeStart's position,
// and a text cut short is split as the whole up to safeEnd.
func TestSpliceBounds(t *testing.T) {
	c := mustNew(t)
	r := rand.New(rand.NewPCG(7, 8))
	for range 20000 {
		s := spliceText(r, r.IntN(30))
		offs := runeOffsets(s)
		head := offs[r.IntN(len(offs))]
		j := s[:head] + spliceText(r, r.IntN(4))
		_, x, _ := c.CountIndexed(s)
		start := int(x.pos[x.safeStart(head)])
		want := positions(j)
		if got, orig := upTo(want, start), upTo(positions(s), start); !slices.Equal(got, orig) || got[len(got)-1] != start {
			t.Fatalf("%q cut at %d then %q: safe start %d, but the split goes %v, not %v", s, head, j[head:], start, got, orig)
		}
		jo := runeOffsets(j)
		end := jo[r.IntN(len(jo))]
		from := jo[r.IntN(len(jo))]
		safe := safeEnd(j[:end], from)
		if got, want := upTo(positions(j[:end]), safe), upTo(want, safe); !slices.Equal(got, want) {
			t.Fatalf("%q cut at %d: safe end %d, but the split goes %v, not %v", j, end, safe, got, want)
		}
	}
}
