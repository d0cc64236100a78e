package memory

import (
	"context"
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
		if wv.Dimensions() < 1 || len(wv.vecs) != wv.Words()*wv.Dimensions() {
			t.Fatalf("dims %d, words %d, %d components", wv.Dimensions(), wv.Words(), len(wv.vecs))
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
