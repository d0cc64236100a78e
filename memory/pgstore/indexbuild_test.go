package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/storetest"
)

// TestIVFLists: an index's lists follow pgvector's advice (rows/1000 up
// to a million rows, sqrt(rows) above), and ivfRows is the size they were
// chosen for. It needs no database.
func TestIVFLists(t *testing.T) {
	for _, tc := range []struct {
		n     int64
		lists int
		rows  int64
	}{
		{0, 1, 1000},
		{10_000, 10, 10_000},
		{1_000_000, 1000, 1_000_000},
		{4_000_000, 2000, 4_000_000},
		{1 << 40, 32768, 32768 * 32768},
	} {
		if got := ivfLists(tc.n); got != tc.lists {
			t.Errorf("ivfLists(%d) = %d, want %d", tc.n, got, tc.lists)
		}
		if got := ivfRows(tc.lists); got != tc.rows {
			t.Errorf("ivfRows(%d) = %d, want %d", tc.lists, got, tc.rows)
		}
	}
}

// TestOpenLeavesValidVectorIndex: a store opened over a valid vector
// index does not read the chunks table to rebuild it (at a million chunks
// counting them took seconds at every start): its background build ends
// while another transaction holds chunks under an exclusive lock.
func TestOpenLeavesValidVectorIndex(t *testing.T) {
	ctx := context.Background()
	approximateVectors(t)
	schema := testSchema(t)
	s := openStore(t, schema, memory.Builtin{})
	if _, err := s.Index(ctx, "a", "c1", storetest.NewCorpus(200, 3).Docs); err != nil {
		t.Fatal(err)
	}
	s.WaitIndexBuilds()
	if names := vectorIndexes(t, s); len(names) != 1 {
		t.Fatalf("vector indexes: %v, want one", names)
	}
	s.Close()
	conn, err := pgx.Connect(ctx, databaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "LOCK TABLE "+pgx.Identifier{schema, "chunks"}.Sanitize()+" IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, schema, memory.Builtin{})
	built := make(chan struct{})
	go func() {
		s.WaitIndexBuilds()
		close(built)
	}()
	select {
	case <-built:
	case <-time.After(20 * time.Second):
		t.Error("the background build of an existing valid vector index waits on the chunks table")
	}
	tx.Rollback(ctx)
	<-built
}

// TestReplacedVectorIndexDropped: a rebuild that crashed after building
// the new vector index and before dropping the one it replaced leaves
// both; the store's next check drops the old one (fewer lists), where it
// was kept until the table grew enough for another rebuild.
func TestReplacedVectorIndexDropped(t *testing.T) {
	ctx := context.Background()
	approximateVectors(t)
	s := openStore(t, testSchema(t), memory.Builtin{})
	if _, err := s.Index(ctx, "a", "c1", storetest.NewCorpus(200, 3).Docs); err != nil {
		t.Fatal(err)
	}
	s.WaitIndexBuilds()
	if _, ok := vectorIndexes(t, s)[vectorIndexPrefix+"1"]; !ok {
		t.Fatalf("vector indexes: %v, want %s1", vectorIndexes(t, s), vectorIndexPrefix)
	}
	if _, err := s.pool.Exec(ctx, ivfIndex(s.emb.Dimensions(), 2)); err != nil {
		t.Fatal(err)
	}
	s.requestVectorIndex()
	s.WaitIndexBuilds()
	names := vectorIndexes(t, s)
	if _, ok := names[vectorIndexPrefix+"2"]; !ok || len(names) != 1 {
		t.Errorf("vector indexes after the check: %v, want only %s2", names, vectorIndexPrefix)
	}
}
