package memstore

import (
	"bytes"
	"context"
	"encoding/gob"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	// An index's order (by user, path and line) is what an index run
	// after a load merges with.
	var unordered snapshot
	if err := gob.NewDecoder(bytes.NewReader(snap.Bytes())).Decode(&unordered); err != nil {
		t.Fatal(err)
	}
	unordered.Chunks[0], unordered.Chunks[1] = unordered.Chunks[1], unordered.Chunks[0]
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&unordered); err != nil {
		t.Fatal(err)
	}
	if err := b.Load("y", &buf); err == nil {
		t.Error("a snapshot of chunks out of order was loaded")
	}
}

// An entry appended to a long log leaves the log's other chunks as they
// were (the same vectors, not re-embedded nor re-indexed); an edit early
// in the log changes the chunks it moves.
func TestAppendKeepsTheLogsOtherChunks(t *testing.T) {
	s, err := New(Options{Embedder: memory.Builtin{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var log strings.Builder
	for i := range 12 {
		fmt.Fprintf(&log, "## 09:%02d\nEntry %d: %s\n\n", i, i, strings.Repeat("the garden needs water and the printer toner ", 6))
	}
	index := func(commit, text string) (*agentIndex, memory.IndexStats) {
		t.Helper()
		st, err := s.Index(ctx, "a", commit, []memory.Document{memory.NewDocument("memory/2026-03-01.md", "ann", text)})
		if err != nil {
			t.Fatal(err)
		}
		return s.agents["a"], st
	}
	before, _ := index("c1", log.String())
	after, st := index("c2", log.String()+"## 10:00\nEntry 12: lake hiking\n")
	if st.Changed != 1 || st.Chunks != len(after.chunks) {
		t.Errorf("stats %+v: want the document changed, its %d chunks counted", st, len(after.chunks))
	}
	reused := 0
	for i, c := range after.chunks {
		if j := slices.Index(before.chunks, c); j >= 0 && &before.vectors[j][0] == &after.vectors[i][0] {
			reused++
		}
	}
	if want := len(before.chunks) - 1; len(before.chunks) < 3 || reused < want {
		t.Errorf("%d of %d chunks kept with their vectors, want at least %d", reused, len(after.chunks), want)
	}
	edited, _ := index("c3", "## 08:00\nA first entry.\n\n"+log.String()+"## 10:00\nEntry 12: lake hiking\n")
	for i, c := range edited.chunks {
		if slices.Contains(after.chunks, c) {
			t.Errorf("chunk %d kept after the lines moved: %+v", i, c)
		}
	}
	hits := search(t, s, "lake hiking", "ann")
	if len(hits) == 0 || !strings.Contains(hits[0].Text, "lake hiking") {
		t.Errorf("the appended entry is not found first: %+v", hits)
	}
}

func search(t *testing.T, s *Store, text, user string) []memory.Hit {
	t.Helper()
	hits, err := s.Search(context.Background(), "a", memory.Query{Text: text, User: user})
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

// TestIndexDocumentOrder: a run with the documents in memory.Documents'
// order or not, after one in either, sees what changed, was kept and
// was removed; a document named twice is refused.
func TestIndexDocumentOrder(t *testing.T) {
	ctx := context.Background()
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := memory.NewDocument("MEMORY.md", "", "apples")
	b := memory.NewDocument("memory/2026-01-01.md", "", "bananas")
	c := memory.NewDocument("MEMORY.md", "u1", "cherries")
	b2 := memory.NewDocument("memory/2026-01-01.md", "", "bananas and kiwis")
	for i, step := range []struct {
		docs []memory.Document
		want memory.IndexStats
	}{
		{[]memory.Document{a, b}, memory.IndexStats{Documents: 2, Changed: 2, Chunks: 2}},
		{[]memory.Document{b2, c}, memory.IndexStats{Documents: 2, Changed: 2, Removed: 1, Chunks: 2}},
		{[]memory.Document{a, b2, c}, memory.IndexStats{Documents: 3, Changed: 1, Unchanged: 2, Chunks: 1}},
		{[]memory.Document{c, a}, memory.IndexStats{Documents: 2, Unchanged: 2, Removed: 1}},
		{[]memory.Document{a, c}, memory.IndexStats{Documents: 2, Unchanged: 2}},
	} {
		st, err := s.Index(ctx, "bot", fmt.Sprint("c", i+1), step.docs)
		if err != nil {
			t.Fatal(err)
		}
		if st != step.want {
			t.Errorf("run %d: %+v, want %+v", i+1, st, step.want)
		}
	}
	if hits := search(t, s, "kiwis", ""); len(hits) != 0 {
		t.Errorf("a removed document is found: %+v", hits)
	}
	for i, docs := range [][]memory.Document{{a, a}, {a, c, a}} {
		if _, err := s.Index(ctx, "bot", fmt.Sprint("twice", i), docs); err == nil || !strings.Contains(err.Error(), "appears twice") {
			t.Errorf("%d documents, one twice: err %v", len(docs), err)
		}
	}
}
