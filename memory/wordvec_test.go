package memory

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A tiny vocabulary in GloVe's order (most frequent first).
const testVectors = `the 0.9 0.9 0.9
car 1 0.1 0
automobile 0.95 0.15 0.05
banana 0 0 1
fruit 0.1 0 0.9
`

func TestWordVectors(t *testing.T) {
	wv, err := LoadWordVectors(strings.NewReader(testVectors))
	if err != nil {
		t.Fatal(err)
	}
	if wv.Dimensions() != 3 || wv.Words() != 5 || !strings.HasPrefix(wv.Model(), "wordvectors-") || !strings.HasSuffix(wv.Model(), "-3") {
		t.Fatalf("dims %d, words %d, model %q", wv.Dimensions(), wv.Words(), wv.Model())
	}
	vs, err := wv.Embed(context.Background(), []string{"my Car", "an automobile", "the banana", "fruit", "zeppelin", ""})
	if err != nil {
		t.Fatal(err)
	}
	if c := Cosine(vs[0], vs[1]); c < 0.95 {
		t.Errorf("car ~ automobile: cosine %.3f, want ≥ 0.95", c)
	}
	if c := Cosine(vs[0], vs[2]); c > 0.3 {
		t.Errorf("car ~ the banana: cosine %.3f, want ≤ 0.3 (\"the\" barely counts)", c)
	}
	if c := Cosine(vs[2], vs[3]); c < 0.9 {
		t.Errorf("the banana ~ fruit: cosine %.3f, want ≥ 0.9", c)
	}
	for _, i := range []int{4, 5} {
		for _, x := range vs[i] {
			if x != 0 {
				t.Errorf("text %d knows no word: want the zero vector, got %v", i, vs[i])
				break
			}
		}
	}
	var norm float64
	for _, x := range vs[0] {
		norm += float64(x) * float64(x)
	}
	if math.Abs(norm-1) > 1e-5 {
		t.Errorf("norm² %v, want 1", norm)
	}
	other, err := LoadWordVectors(strings.NewReader(testVectors + "pear 0 0.1 0.9\n"))
	if err != nil || other.Model() == wv.Model() {
		t.Errorf("another file must be another model: %q, %v", other.Model(), err)
	}
}

func TestLoadWordVectors(t *testing.T) {
	tests := []struct {
		name, in string
		words    int
		err      string
	}{
		{"word2vec header", "2 2\nab 1 2\ncd 3 4\n", 2, ""},
		{"no final newline", "ab 1 2\ncd 3 4", 2, ""},
		{"blank lines", "\nab 1 2\n\n", 1, ""},
		{"duplicate keeps first", "Ab 1 2\nab 3 4\n", 1, ""},
		{"empty", "", 0, "no word vectors"},
		{"short line", "ab 1 2\ncd 3\n", 0, "line 2: 1 components, want 2"},
		{"not a number", "ab 1 x\n", 0, `line 1: component 2: "x" is not a finite number`},
		{"NaN", "ab 1 NaN\n", 0, `component 2: "NaN" is not a finite number`},
		{"too large for float32", "ab 1e40 1\n", 0, `component 1: "1e40"`},
		{"word alone", "ab\n", 0, "line 1: a word without components"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wv, err := LoadWordVectors(strings.NewReader(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || wv.Words() != tt.words {
				t.Fatalf("words %v, err %v; want %d", wv, err, tt.words)
			}
		})
	}
	if wv, _ := LoadWordVectors(strings.NewReader("Ab 1 2\nab 3 4\n")); wv != nil {
		if v, _ := wv.Embed(context.Background(), []string{"AB"}); v[0][0] < 0.4 || v[0][0] > 0.5 {
			t.Errorf("duplicate word: vector %v, want the first line's (normalised 1, 2)", v[0])
		}
	}
}

func TestOpenWordVectorsNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "glove.txt")
	if err := os.WriteFile(path, []byte("ab 1 2\ncd 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := OpenWordVectors(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("err = %v; want the file and the line", err)
	}
}

func FuzzLoadWordVectors(f *testing.F) {
	f.Add(testVectors)
	f.Add("2 2\nab 1 2\ncd 3 4\n")
	f.Add("ab 1e40 NaN\n")
	f.Add("ab 3e38 3e38\ncd 3e38 -3e38\nab cd ab cd\n")
	f.Fuzz(func(t *testing.T, in string) {
		wv, err := LoadWordVectors(strings.NewReader(in))
		if err != nil {
			return
		}
		if wv.Dimensions() < 1 || len(wv.q) != wv.Words()*wv.Dimensions() || len(wv.scale) != wv.Words() {
			t.Fatalf("dims %d, words %d, %d components, %d scales", wv.Dimensions(), wv.Words(), len(wv.q), len(wv.scale))
		}
		vs, err := wv.Embed(context.Background(), []string{in})
		if err != nil || len(vs) != 1 || len(vs[0]) != wv.Dimensions() {
			t.Fatalf("embed: %v", err)
		}
		for _, x := range vs[0] {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("embedding %v is not finite", vs[0])
			}
		}
	})
}

// TestWordVectorsCompact: the int8 rows keep meaning (a text's vector is
// within 0.01 of its float32 mean), and the compact file in the cache
// holds the same vectors and model, and is what a second open reads.
func TestWordVectorsCompact(t *testing.T) {
	var b strings.Builder
	rnd := uint64(1)
	next := func() float64 {
		rnd = rnd*6364136223846793005 + 1442695040888963407
		return float64(int64(rnd>>11)%2000-1000) / 997
	}
	exact := map[string][]float64{}
	for w := 0; w < 300; w++ {
		word := fmt.Sprintf("w%03d", w)
		fmt.Fprint(&b, word)
		for d := 0; d < 50; d++ {
			x := next()
			exact[word] = append(exact[word], x)
			fmt.Fprintf(&b, " %g", x)
		}
		b.WriteByte('\n')
	}
	path := filepath.Join(t.TempDir(), "vectors.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	wv, err := OpenWordVectorsCached(path, cache)
	if err != nil {
		t.Fatal(err)
	}
	text := "w001 w017 w299 w150"
	got, _ := wv.Embed(context.Background(), []string{text})
	want := make([]float32, 50)
	for _, w := range strings.Fields(text) {
		var row int
		fmt.Sscanf(w, "w%d", &row)
		r := float64(row + 1)
		for d, x := range exact[w] {
			want[d] += float32(r / (r + wordRankHalf) * x)
		}
	}
	Normalize(want)
	if c := Cosine(got[0], want); c < 0.99 {
		t.Errorf("cosine to the float32 mean %.4f, want >= 0.99", c)
	}
	files, _ := filepath.Glob(filepath.Join(cache, "wordvectors-*"))
	if len(files) != 1 {
		t.Fatalf("cache files %v, want one", files)
	}
	again, err := OpenWordVectorsCached(path, cache)
	if err != nil || again.Model() != wv.Model() || again.Words() != 300 {
		t.Fatalf("second open: %v, model %q (want %q)", err, again.Model(), wv.Model())
	}
	v2, _ := again.Embed(context.Background(), []string{text})
	for i := range v2[0] {
		if v2[0][i] != got[0][i] {
			t.Fatalf("the cached vectors differ at %d: %v vs %v", i, v2[0][i], got[0][i])
		}
	}
	// A damaged cache is rebuilt, not trusted.
	if err := os.WriteFile(files[0], []byte(wordVectorsMagic+"garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if third, err := OpenWordVectorsCached(path, cache); err != nil || third.Words() != 300 {
		t.Fatalf("open with a damaged cache: %v", err)
	}
	if st, err := os.Stat(files[0]); err != nil || st.Size() < 300*50 {
		t.Errorf("the damaged cache was not rewritten: %v", err)
	}
}

// FuzzParseCompact: whatever bytes a compact word vectors file holds,
// opening it and looking words up never panics, and a file that opens
// embeds to finite vectors.
func FuzzParseCompact(f *testing.F) {
	wv, err := LoadWordVectors(strings.NewReader(testVectors))
	if err != nil {
		f.Fatal(err)
	}
	var b strings.Builder
	if err := wv.writeCompact(&b); err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(b.String()))
	f.Add([]byte(wordVectorsMagic + "\x03abc\x02\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		wv, err := parseCompact(data)
		if err != nil {
			return
		}
		vs, err := wv.Embed(context.Background(), []string{"the car and automobile of a banana fruit zz"})
		if err != nil || len(vs[0]) != wv.Dimensions() {
			t.Fatalf("embed: %v", err)
		}
		for _, x := range vs[0] {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("not finite: %v", vs[0])
			}
		}
	})
}
