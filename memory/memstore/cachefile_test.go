package memstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/quirehq/quire/memory"
)

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// Indexing agent after agent appends each one's vectors to the cache
// file: the file grows by what the agent added, never rewritten whole, and
// a restart reads every vector back.
func TestCacheFileAppends(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "embeddings")
	e := memory.Builtin{Dims: 8}
	s, err := New(Options{Embedder: e, CacheFile: file})
	if err != nil {
		t.Fatal(err)
	}
	var prev int64
	var first os.FileInfo
	for i := range 5 {
		docs := []memory.Document{memory.NewDocument("MEMORY.md", "", fmt.Sprintf("agent %d remembers", i))}
		if _, err := s.Index(ctx, fmt.Sprint("a", i), "c", docs); err != nil {
			t.Fatal(err)
		}
		size := fileSize(t, file)
		entry := memory.EntrySize(e.Model(), docs[0].Chunks()[0].Hash, e.Dimensions())
		if i > 0 && size-prev != entry {
			t.Errorf("agent %d: the file grew by %d bytes, want one entry of %d", i, size-prev, entry)
		}
		prev = size
		st, _ := os.Stat(file)
		if first == nil {
			first = st
		} else if !os.SameFile(first, st) {
			t.Fatalf("agent %d: the file was replaced, not appended to", i)
		}
	}
	s.Close()
	e2 := &counting{Builtin: e}
	s2, _ := New(Options{Embedder: e2, CacheFile: file})
	for i := range 5 {
		docs := []memory.Document{memory.NewDocument("MEMORY.md", "", fmt.Sprintf("agent %d remembers", i))}
		if _, err := s2.Index(ctx, fmt.Sprint("a", i), "c", docs); err != nil {
			t.Fatal(err)
		}
	}
	if e2.texts != 0 {
		t.Errorf("after a restart %d texts were embedded again, want 0", e2.texts)
	}
}

// A file cut short in an append keeps the entries before the cut, and
// the next save rewrites it whole and readable.
func TestCacheFileDamagedTail(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "embeddings")
	e := memory.Builtin{Dims: 8}
	s, _ := New(Options{Embedder: e, CacheFile: file})
	one := []memory.Document{memory.NewDocument("MEMORY.md", "", "first")}
	two := []memory.Document{memory.NewDocument("MEMORY.md", "", "second")}
	s.Index(ctx, "a", "c", one)
	s.Index(ctx, "b", "c", two)
	s.Close()
	if err := os.Truncate(file, fileSize(t, file)-3); err != nil {
		t.Fatal(err)
	}
	e2 := &counting{Builtin: e}
	s2, _ := New(Options{Embedder: e2, CacheFile: file})
	s2.Index(ctx, "a", "c", one)
	if e2.texts != 0 {
		t.Errorf("the entry before the damage was embedded again")
	}
	s2.Index(ctx, "b", "c", two)
	if e2.texts != 1 {
		t.Errorf("embedded %d texts, want the cut one", e2.texts)
	}
	s2.Close()
	var c memory.Cache
	data, _ := os.ReadFile(file)
	if err := c.UnmarshalBinary(data); err != nil || c.Len() != 2 {
		t.Errorf("after the rewrite: %d entries, %v; want 2 and no damage", c.Len(), err)
	}
}

// An embedding no indexed chunk holds any more is dropped from the cache,
// and the file is compacted once such entries take more than half of it.
func TestCacheDropsUnreferenced(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "embeddings")
	e := memory.Builtin{Dims: 256}
	s, _ := New(Options{Embedder: e, CacheFile: file})
	shared := memory.NewDocument("memory/shared.md", "", "kept by agent b")
	s.Index(ctx, "b", "c", []memory.Document{shared})
	var maxSize int64
	for i := range 2000 {
		docs := []memory.Document{shared, memory.NewDocument("MEMORY.md", "", fmt.Sprintf("version %d of the memory", i))}
		if _, err := s.Index(ctx, "a", fmt.Sprint(i), docs); err != nil {
			t.Fatal(err)
		}
		maxSize = max(maxSize, fileSize(t, file))
	}
	if got := s.cache.Len(); got != 2 {
		t.Errorf("the cache holds %d vectors, want 2 (the shared chunk and the last version)", got)
	}
	entry := memory.EntrySize(e.Model(), shared.Hash, e.Dimensions())
	if limit := 2*minCompactBytes + entry; maxSize > limit {
		t.Errorf("the file grew to %d bytes, want at most %d", maxSize, limit)
	}
	if size := fileSize(t, file); size >= 2000*entry {
		t.Errorf("the file was never compacted: %d bytes", size)
	}
}
