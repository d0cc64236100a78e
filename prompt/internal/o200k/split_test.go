package o200k

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
)

// pieces returns the pieces the splitter cuts s into.
func pieces(s string) []string {
	sp := &splitter{}
	sp.reset(s)
	var out []string
	for i := 0; i < len(s); {
		e := sp.next(i)
		if e < 0 {
			i += runeLen(s[i])
			continue
		}
		out = append(out, s[i:e])
		i = e
	}
	return out
}

// referencePieces returns the pieces o200k_base's pattern, compiled as
// tiktoken-go compiles it, cuts s into.
func referencePieces(t *testing.T, s string) []string {
	re := regexp2.MustCompile(pattern, regexp2.None)
	var out []string
	m, err := re.FindStringMatch(s)
	for err == nil && m != nil {
		out = append(out, m.String())
		m, err = re.FindNextMatch(m)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The splitter cuts text where the pattern does: text of the characters
// the pattern's classes tell apart, in random order.
func TestSplitMatchesPattern(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []rune("aZ0 \n\r\t'sStTrReEvVmMlLdD.,-/_ é É ǅ ʰ 中 \u0301 \u0903 ٣ Ⅻ ½ \u00a0 \u2028 \u3000 \u200b 🐙 ſ K")
	for range 5000 {
		var b strings.Builder
		for range r.IntN(40) {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		s := b.String()
		got, want := pieces(s), referencePieces(t, s)
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("%q:\n got %q\nwant %q", s, got, want)
		}
	}
}

// Every code point is classed as the pattern classes it: each one is cut
// out of a text in the contexts that tell the classes apart.
func TestSplitEveryRune(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("splits 400,000 code points with the reference engine")
	}
	var b strings.Builder
	for r := rune(0); r <= unicode.MaxRune; r++ {
		switch {
		case r == 0xd800:
			r = 0xe000 // no surrogates in UTF-8
		case r == 0x40000:
			// Planes 4 to 13 are unassigned, 15 and 16 private use:
			// every code point there is of one class; a few will do.
			r = 0xdffff
		case r > 0xeffff && r%4096 != 0:
			continue
		}
		b.WriteString("a")
		b.WriteRune(r)
		b.WriteString("B ")
		b.WriteRune(r)
		b.WriteString("1\n")
		b.WriteRune(r)
		b.WriteRune(r)
		b.WriteString("'S \t")
	}
	s := b.String()
	got, want := pieces(s), referencePieces(t, s)
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Fatalf("piece %d: got %q, want %q (before: %q)", i, got[i], want[i], want[max(0, i-3):i])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d pieces, want %d", len(got), len(want))
	}
}

// The splitter cuts any text where the pattern does.
func FuzzSplitMatchesPattern(f *testing.F) {
	for _, s := range []string{"Hello, world!", " it's  x \r\n", "Lúcia's 中文 🐙 12345", "\u0301a\u0301B", "ǅx ʰy", "\x7f a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // Count turns invalid bytes into U+FFFD before splitting
		}
		got, want := pieces(s), referencePieces(t, s)
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("%q:\n got %q\nwant %q", s, got, want)
		}
	})
}
