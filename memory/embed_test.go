package memory

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/quirehq/quire/memory/bm25"
)

func TestBuiltin(t *testing.T) {
	b := Builtin{}
	ctx := context.Background()
	vs, err := b.Embed(ctx, []string{"Deploy the service on Friday", "deployment of the service", "my cat likes tuna", "", "Deploy the service on Friday"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 5 || len(vs[0]) != 384 || b.Dimensions() != 384 {
		t.Fatalf("got %d vectors of %d", len(vs), len(vs[0]))
	}
	var norm float64
	for _, x := range vs[0] {
		norm += float64(x) * float64(x)
	}
	if math.Abs(norm-1) > 1e-5 {
		t.Errorf("norm² = %v, want 1", norm)
	}
	if Cosine(vs[0], vs[4]) < 0.9999 {
		t.Errorf("same text, cosine %v", Cosine(vs[0], vs[4]))
	}
	related, unrelated := Cosine(vs[0], vs[1]), Cosine(vs[0], vs[2])
	if related <= unrelated+0.2 {
		t.Errorf("cosine(related) = %.3f, cosine(unrelated) = %.3f", related, unrelated)
	}
	if Cosine(vs[0], vs[3]) != 0 {
		t.Errorf("empty text should be the zero vector")
	}
	if (Builtin{Dims: 64}).Model() == b.Model() {
		t.Error("model name must change with dimensions")
	}
}

type countingEmbedder struct {
	Builtin
	calls, texts int
	fail         bool
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.calls++
	c.texts += len(texts)
	if c.fail {
		return nil, errors.New("offline")
	}
	return c.Builtin.Embed(ctx, texts)
}

func TestEmbedCached(t *testing.T) {
	ctx := context.Background()
	e := &countingEmbedder{}
	var cache Cache
	texts := make([]string, 100)
	hashes := make([]string, 100)
	for i := range texts {
		texts[i] = string(rune('a'+i%26)) + "text"
		hashes[i] = Hash([]byte(texts[i] + string(rune(i))))
	}
	vs, err := EmbedCached(ctx, e, &cache, texts, hashes)
	if err != nil || len(vs) != 100 || vs[99] == nil {
		t.Fatal(err, len(vs))
	}
	if e.calls != 2 || e.texts != 100 {
		t.Errorf("calls = %d texts = %d, want 2 batches of 100 texts", e.calls, e.texts)
	}
	if _, err := EmbedCached(ctx, e, &cache, texts, hashes); err != nil || e.texts != 100 {
		t.Errorf("second run embedded %d texts (err %v), want none", e.texts-100, err)
	}
	e.fail = true
	vs, err = EmbedCached(ctx, e, &cache, []string{"new", texts[0]}, []string{"h-new", hashes[0]})
	if err == nil || vs[0] != nil || vs[1] == nil {
		t.Errorf("outage: err %v, vectors %v %v", err, vs[0] != nil, vs[1] != nil)
	}
	if vs, err := EmbedCached(ctx, None{}, &cache, texts, hashes); err != nil || vs[0] != nil {
		t.Errorf("none embedder: %v", err)
	}
}

func TestCacheEncoding(t *testing.T) {
	var c Cache
	c.Store("m1", "h1", []float32{1, -2.5, 3})
	c.Store("m2", "h1", []float32{})
	data, err := c.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var d Cache
	if err := d.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	if v, ok := d.Lookup("m1", "h1"); !ok || len(v) != 3 || v[1] != -2.5 {
		t.Errorf("lookup m1 = %v %v", v, ok)
	}
	if d.Len() != 2 {
		t.Errorf("len = %d", d.Len())
	}
	if err := d.UnmarshalBinary(data[:len(data)-3]); err == nil {
		t.Error("truncated cache decoded without error")
	}
}

func FuzzCacheDecode(f *testing.F) {
	var c Cache
	c.Store("m", "h", []float32{1, 2})
	data, _ := c.MarshalBinary()
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		var c Cache
		if c.UnmarshalBinary(data) == nil {
			if _, err := c.MarshalBinary(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// referenceVector is the straightforward form of Builtin.vector (string
// features hashed with hash/fnv); the fast one must match it exactly.
func referenceVector(dims int, text string) []float32 {
	v := make([]float32, dims)
	add := func(feature string, weight float32) {
		h := fnv.New64a()
		h.Write([]byte(feature))
		sum := h.Sum64()
		if sum>>63 == 1 {
			weight = -weight
		}
		v[int(sum%uint64(dims))] += weight
	}
	for _, w := range bm25.Tokenize(text) {
		add("w:"+w, 1)
		r := []rune(" " + w + " ")
		gram := 1 / float32(len(r)-2)
		for i := 0; i+3 <= len(r); i++ {
			add("g:"+string(r[i:i+3]), gram)
		}
	}
	Normalize(v)
	return v
}

func TestBuiltinMatchesReference(t *testing.T) {
	for _, text := range []string{"", "ab", "Deploy the service", "Über straße 日本語 テスト x2", strings.Repeat("word ", 50)} {
		got := Builtin{}.vector(text)
		want := referenceVector(384, text)
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%q: component %d = %v, want %v", text, i, got[i], want[i])
			}
		}
	}
}

func FuzzBuiltin(f *testing.F) {
	f.Add("Über straße 日本語")
	f.Fuzz(func(t *testing.T, text string) {
		got := Builtin{Dims: 16}.vector(text)
		want := referenceVector(16, text)
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%q: component %d = %v, want %v", text, i, got[i], want[i])
			}
		}
	})
}

// TestBuiltinBatchEqualsSingle: a batch large enough to be split over
// cores embeds every text exactly as a batch of one does, in order.
func TestBuiltinBatchEqualsSingle(t *testing.T) {
	ctx := context.Background()
	texts := make([]string, 3*builtinBatchPerCore+7)
	for i := range texts {
		texts[i] = fmt.Sprintf("note %d about the printer on floor %d", i, i%7)
	}
	batch, err := Builtin{}.Embed(ctx, texts)
	if err != nil || len(batch) != len(texts) {
		t.Fatalf("batch: %d vectors, %v", len(batch), err)
	}
	for i, text := range texts {
		one, err := Builtin{}.Embed(ctx, []string{text})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(one[0], batch[i]) {
			t.Fatalf("text %d: the batch's vector differs from the single one", i)
		}
	}
}
