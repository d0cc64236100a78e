package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/storetest"
)

// TestHNSWBuildMemory: the build gets the whole graph's memory (halfvec
// and neighbour lists, with a quarter more), never less than 1 GiB nor
// more than 8 GiB. It needs no database.
func TestHNSWBuildMemory(t *testing.T) {
	const gib = 1 << 30
	for _, tc := range []struct {
		n    int64
		dims int
		want int64
	}{
		{0, 384, gib},                   // an empty table: the floor
		{10_000, 384, gib},              // small: the floor
		{1_000_000, 384, 2_240_000_000}, // 1M builtin vectors: 768 + 1,024 bytes each, a quarter more
		{500_000, 1536, 2_560_000_000},  // half a million vectors of a large model
		{10_000_000, 1536, 8 * gib},     // past the ceiling
	} {
		got := hnswBuildMemory(tc.n, tc.dims)
		if got != tc.want {
			t.Errorf("hnswBuildMemory(%d, %d) = %d, want %d", tc.n, tc.dims, got, tc.want)
		}
		if got < gib || got > 8*gib {
			t.Errorf("hnswBuildMemory(%d, %d) = %d, outside 1-8 GiB", tc.n, tc.dims, got)
		}
	}
}

// TestOpenLeavesValidVectorIndex: a store opened over a valid vector
// index does not read the chunks table to rebuild it (at a million chunks
// counting them took seconds at every start): its background build ends
// while another transaction holds chunks under an exclusive lock.
func TestOpenLeavesValidVectorIndex(t *testing.T) {
	ctx := context.Background()
	schema := testSchema(t)
	s := openStore(t, schema, memory.Builtin{})
	if _, err := s.Index(ctx, "a", "c1", storetest.NewCorpus(200, 3).Docs); err != nil {
		t.Fatal(err)
	}
	s.WaitIndexBuilds()
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
