package memstore

import (
	"context"
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
