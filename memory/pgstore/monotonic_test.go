package pgstore

import (
	"context"
	"errors"
	"testing"

	"github.com/quirehq/quire/memory"
)

// TestIndexMonotonic: with Options.Older, an Index of a commit older than
// the stored one writes nothing and answers ErrOlder; a newer one is
// indexed.
func TestIndexMonotonic(t *testing.T) {
	ctx := context.Background()
	schema := testSchema(t)
	order := map[string]int{"c1": 1, "c2": 2, "c3": 3}
	s, err := Open(ctx, Options{URL: databaseURL(t), Schema: schema, Embedder: memory.None{},
		Older: func(_, commit, indexed string) bool { return order[commit] < order[indexed] }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	doc := func(text string) []memory.Document {
		return []memory.Document{memory.NewDocument("MEMORY.md", "", text)}
	}
	if _, err := s.Index(ctx, "a", "c2", doc("newer zebrafinch")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Index(ctx, "a", "c1", doc("older okapi")); !errors.Is(err, ErrOlder) {
		t.Fatalf("indexing an older commit over a newer one: %v, want ErrOlder", err)
	}
	if c, err := s.IndexedCommit(ctx, "a"); err != nil || c != "c2" {
		t.Fatalf("indexed commit %q %v, want c2 kept", c, err)
	}
	if hits, err := s.Search(ctx, "a", memory.Query{Text: "okapi"}); err != nil || len(hits) != 0 {
		t.Fatalf("the older commit's text was indexed: %+v %v", hits, err)
	}
	if _, err := s.Index(ctx, "a", "c3", doc("newest")); err != nil {
		t.Fatalf("a newer commit: %v", err)
	}
	if c, _ := s.IndexedCommit(ctx, "a"); c != "c3" {
		t.Fatalf("indexed commit %q, want c3", c)
	}
}
