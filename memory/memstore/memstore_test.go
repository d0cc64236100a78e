package memstore

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, e memory.Embedder) memory.Store {
		s, err := New(Options{Embedder: e, CacheFile: filepath.Join(t.TempDir(), "embeddings")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// The suite holds on the approximate vector index too (every agent gets
// one): at the suite's sizes the calibrated probe reads enough lists to
// rank as the exact scan does.
func TestConformanceApproximate(t *testing.T) {
	storetest.Run(t, func(t *testing.T, e memory.Embedder) memory.Store {
		s, err := New(Options{Embedder: e, ExactVectors: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// Above the exact-scan threshold the approximate index must still rank
// as the exact scan does (storetest.Parity: the same top 6 for ≥ 99 % of
// queries), here on 3,000 chunks with every agent approximate.
func TestApproximateParity(t *testing.T) {
	open := func(exact int) storetest.Open {
		return func(t *testing.T, e memory.Embedder) memory.Store {
			s, err := New(Options{Embedder: e, ExactVectors: exact})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
	}
	storetest.Parity(t, open(0), open(-1))
}

type counting struct {
	memory.Builtin
	texts int
}

func (c *counting) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.texts += len(texts)
	return c.Builtin.Embed(ctx, texts)
}

func TestCachePersists(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "cache", "embeddings")
	docs := []memory.Document{memory.NewDocument("MEMORY.md", "", "one\n\n"+string(make([]byte, 0))+"two"), memory.NewDocument("memory/x.md", "", "three")}
	e := &counting{}
	s, err := New(Options{Embedder: e, CacheFile: file})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Index(ctx, "a", "c1", docs); err != nil {
		t.Fatal(err)
	}
	if e.texts != 2 {
		t.Fatalf("embedded %d texts, want 2", e.texts)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// A restart rebuilds the index from the workspace but embeds nothing.
	e2 := &counting{}
	s2, err := New(Options{Embedder: e2, CacheFile: file})
	if err != nil {
		t.Fatal(err)
	}
	st, err := s2.Index(ctx, "a", "c1", docs)
	if err != nil || st.Embedded != 2 || e2.texts != 0 {
		t.Errorf("after restart: %+v, %v; embedded %d texts, want 0", st, err, e2.texts)
	}
}

// A snapshot carries an agent's index to another store: an unchanged
// memory is neither re-chunked nor re-embedded (nor is the embedding
// cache read), and searches rank alike; one of another embedder is
// refused.
func TestSnapshot(t *testing.T) {
	ctx := context.Background()
	docs := []memory.Document{
		memory.NewDocument("MEMORY.md", "", "Ann likes green tea.\n\nThe printer is on floor two."),
		memory.NewDocument("memory/2023-05-08.md", "", "## 10:00\nMel: we went hiking by the lake."),
		memory.NewDocument("MEMORY.md", "bob", "Bob is allergic to nuts."),
	}
	cacheFile := filepath.Join(t.TempDir(), "embeddings")
	a, err := New(Options{Embedder: &counting{}, CacheFile: cacheFile})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Index(ctx, "x", "", docs); err != nil {
		t.Fatal(err)
	}
	var snap bytes.Buffer
	if err := a.Save("x", &snap); err != nil {
		t.Fatal(err)
	}
	a.Close()
	if err := os.WriteFile(cacheFile, []byte("not read"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := &counting{}
	b, err := New(Options{Embedder: e, CacheFile: cacheFile})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Load("x", bytes.NewReader(snap.Bytes())); err != nil {
		t.Fatal(err)
	}
	st, err := b.Index(ctx, "x", "", docs)
	if err != nil || st.Changed != 0 || st.Unchanged != 3 || e.texts != 0 {
		t.Fatalf("index after load: %+v, %v, %d texts embedded; want nothing to do", st, err, e.texts)
	}
	hits, err := b.Search(ctx, "x", memory.Query{Text: "hiking in May 2023", User: "bob"})
	if err != nil || len(hits) == 0 || hits[0].Path != "memory/2023-05-08.md" {
		t.Errorf("search after load: %+v, %v", hits, err)
	}
	if got, _ := os.ReadFile(cacheFile); string(got) != "not read" {
		t.Error("the embedding cache was read or rewritten although nothing needed embedding")
	}
	other, _ := New(Options{Embedder: memory.Builtin{Dims: 32}})
	if err := other.Load("x", bytes.NewReader(snap.Bytes())); err == nil {
		t.Error("a snapshot of another embedder was loaded")
	}
	if err := other.Load("x", bytes.NewReader([]byte("garbage"))); err == nil {
		t.Error("a damaged snapshot was loaded")
	}
}
