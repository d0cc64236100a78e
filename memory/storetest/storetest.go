// Package storetest is the conformance suite every memory.Store passes:
// scoping, the user boost and dedup, deterministic order, re-indexing and
// deletion, partial-word queries, embedder outages and back-fill, indexed
// commits, and a small relevance set (recall@3).
package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/quirehq/quire/memory"
)

// Open returns a new, empty store that uses e. The suite calls it once per
// test; the factory cleans up after t.
type Open func(t *testing.T, e memory.Embedder) memory.Store

// Flaky wraps an embedder that can be switched off, as an endpoint outage.
type Flaky struct {
	memory.Embedder
	Down atomic.Bool
}

// Embed fails while Down is set.
func (f *Flaky) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if f.Down.Load() {
		return nil, errors.New("embedder unreachable")
	}
	return f.Embedder.Embed(ctx, texts)
}

// Run runs the suite against the stores that open makes.
func Run(t *testing.T, open Open) {
	tests := []struct {
		name string
		fn   func(*testing.T, Open)
	}{
		{"Scoping", testScoping},
		{"UserBoostAndDedup", testUserBoostAndDedup},
		{"DeterministicOrder", testDeterministicOrder},
		{"ReindexReplacesOnlyChangedDocument", testReindex},
		{"DeleteRemovesChunks", testDelete},
		{"PartialWordQuery", testPartialWords},
		{"EmbedderOutageThenBackfill", testOutage},
		{"IndexedCommit", testIndexedCommit},
		{"VectorOnly", testVectorOnly},
		{"RecallAt3", testRecall},
		{"DateQuestion", testDateQuestion},
		{"WordForms", testWordForms},
		{"UnstorableDocumentSkipped", testUnstorable},
		{"Context", testContext},
		{"PeriodQuestion", testPeriodQuestion},
		{"AppendsMatchRebuild", testAppendsMatchRebuild},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open) })
	}
}

func doc(user, path, text string) memory.Document { return memory.NewDocument(path, user, text) }

func index(t *testing.T, s memory.Store, agent, commit string, docs ...memory.Document) memory.IndexStats {
	t.Helper()
	st, err := s.Index(context.Background(), agent, commit, docs)
	if err != nil {
		t.Fatalf("index %s@%s: %v", agent, commit, err)
	}
	return st
}

func search(t *testing.T, s memory.Store, agent string, q memory.Query) []memory.Hit {
	t.Helper()
	hits, err := s.Search(context.Background(), agent, q)
	if err != nil {
		t.Fatalf("search %q: %v", q.Text, err)
	}
	return hits
}

func describe(hits []memory.Hit) string {
	var b strings.Builder
	for _, h := range hits {
		fmt.Fprintf(&b, "%s:%s:%d(%.3f) ", h.User, h.Path, h.StartLine, h.Score)
	}
	return b.String()
}

func testScoping(t *testing.T, open Open) {
	s := open(t, memory.Builtin{})
	index(t, s, "a", "c1",
		doc("", "MEMORY.md", "The team deploys pancakes on Fridays."),
		doc("alice", "memory/notes.md", "Alice's secret: pancakes with maple syrup."),
		doc("bob", "memory/2026-01-01.md", "Bob's secret: pancakes with jam."),
	)
	index(t, s, "b", "c1", doc("", "MEMORY.md", "Agent b also likes pancakes."))
	users := func(hits []memory.Hit) map[string]bool {
		m := map[string]bool{}
		for _, h := range hits {
			m[h.User] = true
		}
		return m
	}
	got := users(search(t, s, "a", memory.Query{Text: "pancakes secret", User: "alice"}))
	if !got[""] || !got["alice"] || got["bob"] {
		t.Errorf("alice sees users %v; want agent and alice only", got)
	}
	got = users(search(t, s, "a", memory.Query{Text: "pancakes secret"}))
	if !got[""] || len(got) != 1 {
		t.Errorf("a search without user sees %v; want agent-level only", got)
	}
	for _, h := range search(t, s, "b", memory.Query{Text: "pancakes secret", User: "alice"}) {
		if h.Path != "MEMORY.md" || h.User != "" || !strings.Contains(h.Text, "Agent b") {
			t.Errorf("agent b sees %+v", h)
		}
	}
	if hits := search(t, s, "nobody", memory.Query{Text: "pancakes"}); len(hits) != 0 {
		t.Errorf("unknown agent: %v", describe(hits))
	}
}

func testUserBoostAndDedup(t *testing.T, open Open) {
	s := open(t, memory.Builtin{})
	same := "Deployment checklist: run the migrations, then restart the workers."
	index(t, s, "a", "c1",
		doc("", "MEMORY.md", same),
		doc("alice", "MEMORY.md", same),
		doc("", "memory/notes.md", "Deployment happens on Tuesdays."),
	)
	agentHits := search(t, s, "a", memory.Query{Text: "deployment checklist migrations"})
	hits := search(t, s, "a", memory.Query{Text: "deployment checklist migrations", User: "alice"})
	var copies int
	for _, h := range hits {
		if h.Path == "MEMORY.md" && h.StartLine == 1 {
			copies++
			if h.User != "alice" || h.Scope != memory.ScopeUser {
				t.Errorf("duplicate kept the agent's copy: %+v", h)
			}
			if h.Score > 1.2*1.0001 {
				t.Errorf("score %.3f: duplicates were summed", h.Score)
			}
			for _, a := range agentHits {
				if a.Path == "MEMORY.md" && a.StartLine == 1 {
					if diff := h.Score - 1.2*a.Score; diff > 1e-3 || diff < -1e-3 {
						t.Errorf("user copy scores %.4f, want 1.2 × %.4f", h.Score, a.Score)
					}
				}
			}
		}
	}
	if copies != 1 {
		t.Errorf("MEMORY.md:1 appears %d times in %s; want once", copies, describe(hits))
	}
	if len(hits) < 2 || hits[0].User != "alice" {
		t.Errorf("hits = %s; want alice's copy first", describe(hits))
	}
}

func testDeterministicOrder(t *testing.T, open Open) {
	s := open(t, memory.Builtin{})
	var docs []memory.Document
	for _, p := range []string{"memory/c.md", "memory/a.md", "MEMORY.md", "memory/b.md"} {
		docs = append(docs, doc("", p, "Same words in every file: quarterly budget review."))
	}
	index(t, s, "a", "c1", docs...)
	first := search(t, s, "a", memory.Query{Text: "quarterly budget"})
	want := []string{"MEMORY.md", "memory/a.md", "memory/b.md", "memory/c.md"}
	if len(first) != 4 {
		t.Fatalf("hits = %s", describe(first))
	}
	for i, h := range first {
		if h.Path != want[i] {
			t.Fatalf("order = %s; want ties by path %v", describe(first), want)
		}
	}
	for i := 0; i < 5; i++ {
		if got := search(t, s, "a", memory.Query{Text: "quarterly budget"}); describe(got) != describe(first) {
			t.Fatalf("order changed: %s vs %s", describe(got), describe(first))
		}
	}
}

func chunkSet(t *testing.T, s memory.Store, agent string) map[string]bool {
	t.Helper()
	chunks, err := s.Chunks(context.Background(), agent)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]bool{}
	for _, c := range chunks {
		m[fmt.Sprintf("%s:%s:%d-%d:%s", c.User, c.Path, c.StartLine, c.EndLine, c.Hash)] = true
	}
	return m
}

func testReindex(t *testing.T, open Open) {
	s := open(t, memory.Builtin{})
	long := strings.Repeat("Paragraph about the garden and tomatoes.\n", 20) + "\n" + strings.Repeat("Second paragraph about invoices.\n", 20)
	keep := doc("", "MEMORY.md", long)
	index(t, s, "a", "c1", keep, doc("", "memory/2026-01-01.md", "Old note: the wifi password is swordfish."))
	before := chunkSet(t, s, "a")
	st := index(t, s, "a", "c2", keep, doc("", "memory/2026-01-01.md", "New note: the wifi password is albatross.\n\nAnd a second line."))
	if st.Changed != 1 || st.Unchanged != 1 || st.Removed != 0 || st.Chunks != 1 {
		t.Errorf("stats = %+v; want 1 changed (1 chunk), 1 unchanged", st)
	}
	after := chunkSet(t, s, "a")
	for k := range before {
		if strings.HasPrefix(k, ":MEMORY.md:") && !after[k] {
			t.Errorf("unchanged chunk %s was replaced", k)
		}
		if strings.HasPrefix(k, ":memory/2026") && after[k] {
			t.Errorf("old chunk %s survived", k)
		}
	}
	if len(after) != len(before) {
		t.Errorf("%d chunks after, %d before", len(after), len(before))
	}
	for _, h := range search(t, s, "a", memory.Query{Text: "swordfish"}) {
		if strings.Contains(h.Text, "swordfish") {
			t.Errorf("old text still found: %+v", h)
		}
	}
	if hits := search(t, s, "a", memory.Query{Text: "albatross"}); len(hits) == 0 || hits[0].Path != "memory/2026-01-01.md" {
		t.Errorf("new text not found: %s", describe(hits))
	}
	if st := index(t, s, "a", "c3", keep, doc("", "memory/2026-01-01.md", "New note: the wifi password is albatross.\n\nAnd a second line.")); st.Changed != 0 || st.Unchanged != 2 {
		t.Errorf("re-index of the same snapshot: %+v", st)
	}
}

func testDelete(t *testing.T, open Open) {
	s := open(t, memory.Builtin{})
	index(t, s, "a", "c1", doc("", "MEMORY.md", "keep me: zebra"), doc("alice", "memory/x.md", "delete me: giraffe"))
	st := index(t, s, "a", "c2", doc("", "MEMORY.md", "keep me: zebra"))
	if st.Removed != 1 {
		t.Errorf("stats = %+v; want 1 removed", st)
	}
	chunks := chunkSet(t, s, "a")
	if len(chunks) != 1 {
		t.Errorf("chunks = %v", chunks)
	}
	for _, h := range search(t, s, "a", memory.Query{Text: "giraffe", User: "alice"}) {
		if h.User == "alice" {
			t.Errorf("deleted document found: %+v", h)
		}
	}
	index(t, s, "a", "c3")
	if chunks := chunkSet(t, s, "a"); len(chunks) != 0 {
		t.Errorf("empty snapshot left %v", chunks)
	}
}

func testPartialWords(t *testing.T, open Open) {
	s := open(t, memory.None{})
	index(t, s, "a", "c1",
		doc("", "MEMORY.md", "To turn a PDF into Markdown, use pandoc with the gfm writer."),
		doc("", "memory/2026-01-01.md", "Lunch was good."),
	)
	hits := search(t, s, "a", memory.Query{Text: "convert a pdf to markdown"})
	if len(hits) != 1 || hits[0].Path != "MEMORY.md" {
		t.Errorf("hits = %s; want the chunk with some of the words", describe(hits))
	}
}

func testOutage(t *testing.T, open Open) {
	e := &Flaky{Embedder: memory.Builtin{}}
	e.Down.Store(true)
	s := open(t, e)
	st := index(t, s, "a", "c1", doc("", "MEMORY.md", "The backup runs nightly at two."), doc("", "memory/x.md", "Printer is on floor three."))
	if st.EmbedError == nil || st.Pending != 2 {
		t.Errorf("stats = %+v; want an embed error and 2 pending", st)
	}
	if commit, _ := s.IndexedCommit(context.Background(), "a"); commit != "c1" {
		t.Errorf("indexed commit = %q during outage; the text was indexed", commit)
	}
	if hits := search(t, s, "a", memory.Query{Text: "nightly backup"}); len(hits) == 0 || hits[0].Path != "MEMORY.md" {
		t.Errorf("text search during outage: %s", describe(hits))
	}
	if n, err := s.Backfill(context.Background()); err == nil || n != 0 {
		t.Errorf("backfill during outage = %d, %v", n, err)
	}
	e.Down.Store(false)
	n, err := s.Backfill(context.Background())
	if err != nil || n != 2 {
		t.Fatalf("backfill = %d, %v; want 2", n, err)
	}
	if n, err := s.Backfill(context.Background()); err != nil || n != 0 {
		t.Errorf("second backfill = %d, %v; want 0", n, err)
	}
	// The vectors are there: a query sharing only word parts finds it.
	hits := search(t, s, "a", memory.Query{Text: "printers floors"})
	if len(hits) == 0 || hits[0].Path != "memory/x.md" {
		t.Errorf("vector search after backfill: %s", describe(hits))
	}
}

func testVectorOnly(t *testing.T, open Open) {
	s := open(t, memory.Builtin{})
	index(t, s, "a", "c1", doc("", "MEMORY.md", "Deployments are scheduled weekly."), doc("", "memory/x.md", "Cats sleep all day."))
	// "deploying schedule" shares no token with either chunk; only the
	// builtin embedder's character n-grams connect it.
	hits := search(t, s, "a", memory.Query{Text: "deploying schedule"})
	if len(hits) == 0 || hits[0].Path != "MEMORY.md" {
		t.Errorf("hits = %s; want MEMORY.md first via vectors", describe(hits))
	}
	if hits := search(t, s, "a", memory.Query{Text: "deploying schedule", MinScore: 2}); len(hits) != 0 {
		t.Errorf("min_score 2 left %s", describe(hits))
	}
}

func testIndexedCommit(t *testing.T, open Open) {
	s := open(t, memory.Builtin{})
	ctx := context.Background()
	if c, err := s.IndexedCommit(ctx, "a"); err != nil || c != "" {
		t.Errorf("before indexing: %q, %v", c, err)
	}
	index(t, s, "a", "c1", doc("", "MEMORY.md", "x1"))
	index(t, s, "b", "d1", doc("", "MEMORY.md", "x2"))
	index(t, s, "a", "c2", doc("", "MEMORY.md", "x1"))
	if c, _ := s.IndexedCommit(ctx, "a"); c != "c2" {
		t.Errorf("a indexed %q, want c2", c)
	}
	if c, _ := s.IndexedCommit(ctx, "b"); c != "d1" {
		t.Errorf("b indexed %q, want d1", c)
	}
	if st := index(t, s, "a", "c2", doc("", "MEMORY.md", "changed")); st.Changed != 0 || st.Chunks != 0 {
		t.Errorf("index of the already indexed commit did work: %+v", st)
	}
	if st := index(t, s, "a", "", doc("", "MEMORY.md", "working tree")); st.Changed != 1 {
		t.Errorf("index without a commit (working tree) skipped: %+v", st)
	}
}

// testDateQuestion: a question that names a day, month or year finds the
// daily log of that date, whose date is only in its file name, and the
// hit carries the date (not in its text).
func testDateQuestion(t *testing.T, open Open) {
	for _, e := range []memory.Embedder{memory.None{}, memory.Builtin{}} {
		s := open(t, e)
		var docs []memory.Document
		for _, day := range []string{"2022-05-25", "2023-05-02", "2023-08-14", "2023-09-30"} {
			docs = append(docs, doc("", "memory/"+day+".md", "## 10:00\nMel: we went hiking by the lake.\n\n## 10:01\nAnn: lovely."))
		}
		index(t, s, "a", "c1", docs...)
		for q, want := range map[string]string{
			"Where did Mel go hiking in August 2023?":   "2023-08-14",
			"What did Mel do on 25 May, 2022?":          "2022-05-25",
			"What did Mel do on Saturday, 30 September": "2023-09-30",
		} {
			hits := search(t, s, "a", memory.Query{Text: q})
			if len(hits) == 0 || hits[0].Path != "memory/"+want+".md" || hits[0].Date != want {
				t.Errorf("%s: %q found %s; want memory/%s.md first, with its date", e.Model(), q, describe(hits), want)
			}
			if len(hits) > 0 && strings.Contains(hits[0].Text, want[:4]) {
				t.Errorf("%s: the date words are part of the returned text %q", e.Model(), hits[0].Text)
			}
		}
	}
}

// testWordForms: a query finds other forms of its words (stemming) and
// its stop words do not decide the ranking.
func testWordForms(t *testing.T, open Open) {
	s := open(t, memory.None{})
	index(t, s, "a", "c1",
		doc("", "memory/a.md", "Caroline painted a sunrise and hikes every weekend."),
		doc("", "memory/b.md", "What did you do? It was what it was, and did it."))
	hits := search(t, s, "a", memory.Query{Text: "What did Caroline paint?"})
	if len(hits) == 0 || hits[0].Path != "memory/a.md" {
		t.Errorf("hits %s; want memory/a.md first (paint = painted; what, did are stop words)", describe(hits))
	}
	if hits := search(t, s, "a", memory.Query{Text: "hiking"}); len(hits) != 1 || hits[0].Path != "memory/a.md" {
		t.Errorf("hiking found %s; want memory/a.md (hikes)", describe(hits))
	}
}

// testUnstorable: a workspace whose daily log holds a NUL (pushed before
// the text rules) is indexed all the same, that log left out: a NUL in a
// text column fails PostgreSQL's whole index run.
func testUnstorable(t *testing.T, open Open) {
	s := open(t, memory.Builtin{})
	fsys := fstest.MapFS{
		"MEMORY.md":                        {Data: []byte("The wifi password is on the fridge.\n")},
		"memory/2026-01-02.md":             {Data: []byte("# 2026-01-02\n\n## 10:00\n\nMet Ana\x00 at the harbour.\n")},
		"users/alice/memory/2026-01-02.md": {Data: []byte("Alice \x1b[31m likes the harbour.\n")},
		"users/alice/MEMORY.md":            {Data: []byte("Alice walks to the harbour daily.\n")},
	}
	docs, problems, err := memory.Documents(fsys, ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || len(problems) != 2 {
		t.Fatalf("Documents: %d documents, problems %v; want 2 and 2", len(docs), problems)
	}
	index(t, s, "a", "c1", docs...)
	if commit, err := s.IndexedCommit(context.Background(), "a"); commit != "c1" || err != nil {
		t.Errorf("indexed commit %q, %v; want c1", commit, err)
	}
	if hits := search(t, s, "a", memory.Query{Text: "wifi fridge"}); len(hits) != 1 || hits[0].Path != "MEMORY.md" {
		t.Errorf("wifi fridge: %s; want MEMORY.md", describe(hits))
	}
	hits := search(t, s, "a", memory.Query{Text: "harbour", User: "alice"})
	if len(hits) != 1 || hits[0].User != "alice" || hits[0].Path != "MEMORY.md" {
		t.Errorf("harbour: %s; want alice's MEMORY.md alone, not the skipped logs", describe(hits))
	}
}
