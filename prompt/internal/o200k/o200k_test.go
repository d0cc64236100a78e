package o200k

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tiktoken-go/tokenizer"
)

var reference = sync.OnceValue(func() tokenizer.Codec {
	c, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		panic(err)
	}
	return c
})

func mustNew(tb testing.TB) *Counter {
	c, err := New()
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func check(t *testing.T, c *Counter, s string) {
	t.Helper()
	want, err := reference().Count(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Count(s)
	if err != nil || got != want {
		t.Fatalf("Count(%.80q…) = %d, %v; tiktoken-go says %d", s, got, err, want)
	}
}

// Every file of the example workspace, and text built to hit long pieces
// (the heap merge), count as tiktoken-go counts them.
func TestMatchesTiktoken(t *testing.T) {
	c := mustNew(t)
	root := "../../../examples"
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		check(t, c, string(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"", "a", "Hello, world!", "  leading and trailing  ", "\r\n\r\n", "I'm sure it's they'LL",
		strings.Repeat("=", 500), strings.Repeat(" ", 1000) + "x", strings.Repeat("ab", 300),
		"émoji 🐙🏗️ 中文字符 عربى ελληνικά", strings.Repeat("🐙", 100), "12345678901234567890",
		"\xff\xfe invalid", "<|endoftext|>", strings.Repeat("abcdefghijklmnopqrstuvwxyz", 20),
	} {
		check(t, c, s)
	}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("aeiou bcdfg XYZ 0123 .,;:!? \n\t'\"-_/ é ü ß 中 🐙 \u200b")
	for range 300 {
		var b strings.Builder
		for range r.IntN(300) {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		check(t, c, b.String())
	}
}

// Text whose pieces recur, or are too many and too varied for a text's
// piece cache to hold, counts as tiktoken-go counts it: the cache may
// only ever save work.
func TestPieceCacheMatchesTiktoken(t *testing.T) {
	c := mustNew(t)
	r := rand.New(rand.NewPCG(9, 10))
	words := []string{"the", "The", "THE", "they", "them", "it's", "It'S", "Lúcia", "lúcia", "中文", "中", "🐙", "🐙🐙", "naïve", "naive",
		"\r\n", "\n\n", "   ", "\t", "123", "1234", "١٢٣", "--", "—", "...", "/", "'", "ſ", "é", "e\u0301"}
	for _, n := range []int{10, 100, 1000, 20000} {
		var b strings.Builder
		for range n {
			b.WriteString(words[r.IntN(len(words))])
			if r.IntN(3) == 0 {
				b.WriteByte(' ')
			}
		}
		check(t, c, b.String())
	}
	// More distinct pieces than any cache holds: random words.
	var b strings.Builder
	for range 30000 {
		for range 1 + r.IntN(12) {
			b.WriteByte(byte('a' + r.IntN(26)))
		}
		b.WriteString([]string{" ", ", ", ".\n", " ", "  "}[r.IntN(5)])
	}
	check(t, c, b.String())
}

// Texts counted one after another with one Counter, whose pieces share
// their first eight bytes and length but differ after, count as
// tiktoken-go counts them: the piece cache outlives a text, and keys
// pieces by their content. Enough of them that the cache grows, and
// starts over.
func TestPieceCacheAcrossTexts(t *testing.T) {
	c := mustNew(t)
	r := rand.New(rand.NewPCG(11, 12))
	const letters = "qxzjkvwy"
	for range 400 {
		var b strings.Builder
		for range 200 {
			b.WriteString(" Quirequire")
			for range r.IntN(8) {
				b.WriteByte(letters[r.IntN(len(letters))])
			}
		}
		check(t, c, b.String())
	}
}

// A piece of one byte counts one token without a look-up: every byte is
// a token of its own.
func TestEveryByteIsAToken(t *testing.T) {
	for b := range 256 {
		if _, ok := rank(string([]byte{byte(b)})); !ok {
			t.Errorf("byte %#x is not a token", b)
		}
	}
}

// Every token of the vocabulary is found at its rank: vocab.bin's table
// was made (gen.go) with the hash the package looks tokens up with.
func TestEveryTokenIsFound(t *testing.T) {
	for r := range uint32(nTokens) {
		if got, ok := rank(token(r)); !ok || got != r {
			t.Fatalf("token %d (%q): rank gives %d, %v", r, token(r), got, ok)
		}
	}
}

func FuzzMatchesTiktoken(f *testing.F) {
	for _, s := range []string{"Hello, world!", "  x  ", strings.Repeat("-", 200), "it's 🐙", "\xff"} {
		f.Add(s)
	}
	c := mustNew(f)
	f.Fuzz(func(t *testing.T, s string) { check(t, c, s) })
}

func BenchmarkCount(b *testing.B) {
	data, err := os.ReadFile("../../../examples/agents/concierge/SOUL.md")
	if err != nil {
		b.Fatal(err)
	}
	s := string(data)
	b.Run("o200k", func(b *testing.B) {
		c := mustNew(b)
		b.SetBytes(int64(len(s)))
		for b.Loop() {
			c.Count(s)
		}
	})
	b.Run("tiktoken-go", func(b *testing.B) {
		c := reference()
		b.SetBytes(int64(len(s)))
		for b.Loop() {
			c.Count(s)
		}
	})
}

// A Counter starts with no piece counted: the pooled piece cache another
// Counter filled is cleared when it takes it over, so a first prompt (a
// new Tokenizer, a new Counter) is counted from scratch, as benchmarked.
func TestNewCounterStartsCold(t *testing.T) {
	a, b := mustNew(t), mustNew(t)
	sp := new(splitter) // as the pool may hand it to a, then to b
	sp.claim(a)
	sp.cache.init()
	sp.cache.count("Azulejo", 0, 7)
	if sp.cache.used == 0 {
		t.Fatal("a counted a piece and the cache holds none")
	}
	sp.claim(a)
	if sp.cache.used == 0 {
		t.Fatal("a took its own splitter back without its pieces")
	}
	sp.claim(b)
	if sp.cache.used != 0 || sp.cache.owner != b {
		t.Fatalf("b took a splitter with %d pieces of another Counter's", sp.cache.used)
	}
}

// Every two bytes are found in the table of tokens of two bytes exactly
// when they are a token, at its rank.
func TestPairRanks(t *testing.T) {
	for k := range 1 << 16 {
		a, b := byte(k), byte(k>>8)
		want := uint32(noRank)
		if r, ok := rank(string([]byte{a, b})); ok {
			want = r
		}
		if got := pairRank2(a, b); got != want {
			t.Fatalf("pairRank2(%#x, %#x) = %d, want %d", a, b, got, want)
		}
	}
}
