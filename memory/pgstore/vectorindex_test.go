package pgstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/storetest"
)

// approximateVectors makes every agent's vector side go through the HNSW
// index until the test ends.
func approximateVectors(t *testing.T) {
	old := exactVectorChunks
	t.Cleanup(func() { exactVectorChunks = old })
	exactVectorChunks = 0
}

// sameCandidates reports whether a and b hold the same chunks in the
// same order with the same scores.
func sameCandidates(a, b []memory.Candidate) bool {
	return slices.EqualFunc(a, b, func(x, y memory.Candidate) bool {
		return x.User == y.User && x.Path == y.Path && x.StartLine == y.StartLine && x.VectorScore == y.VectorScore && x.TextScore == y.TextScore
	})
}

// TestVectorIndexReranksExactly: the vector side finds its candidates
// through the halfvec HNSW index (the planner matches the indexed
// expression) and returns them with the stored vectors' exact cosines,
// in exact order: on a corpus small enough for the index to miss
// nothing, what an exact scan returns.
func TestVectorIndexReranksExactly(t *testing.T) {
	ctx := context.Background()
	approximateVectors(t)
	s := openStore(t, testSchema(t), memory.Builtin{})
	corpus := storetest.NewCorpus(600, 5)
	if _, err := s.Index(ctx, "a", "c1", corpus.Docs); err != nil {
		t.Fatal(err)
	}
	s.WaitIndexBuilds()
	dims := s.emb.Dimensions()
	n := memory.CandidateLimit(0)
	for i, q := range corpus.Queries[:40] {
		user := corpus.Users[i%len(corpus.Users)]
		vs, err := s.emb.Embed(ctx, []string{q})
		if err != nil {
			t.Fatal(err)
		}
		approx, err := s.vectorSide(ctx, "a", user, &bm25Query{}, vs[0], n, false)
		if err != nil {
			t.Fatal(err)
		}
		exact, err := s.vectorSide(ctx, "a", user, &bm25Query{}, vs[0], n, true)
		if err != nil {
			t.Fatal(err)
		}
		if len(approx) != n || !sameCandidates(approx, exact) {
			t.Fatalf("query %q: the index's candidates\n%s\nwant the exact scan's\n%s", q, brief(approx), brief(exact))
		}
		if i == 0 {
			plan := explain(t, s, vectorSQL(dims, false), "a", user, n, pgvector.NewVector(vs[0]), vectorCandidates(n, false))
			if !strings.Contains(plan, "Index Scan using chunks_embedding_hnsw") {
				t.Errorf("the vector side does not read the HNSW index:\n%s", plan)
			}
		}
	}
}

// explain returns the plan of query with args, scans and sorts costed
// out where an index can serve: on a small table they are cheaper.
func explain(t *testing.T, s *Store, query string, args ...any) string {
	t.Helper()
	ctx := context.Background()
	var plan []string
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_sort = off"); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, "EXPLAIN "+query, args...)
		if err != nil {
			return err
		}
		plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "\n")
}

// TestMigrationHalfvecIndex: a database from before migration 007, whose
// HNSW index is over the full vectors, gets the halfvec index in its
// place, built in the background when the store opens; searches through
// it return what exact vector scans returned before the upgrade.
func TestMigrationHalfvecIndex(t *testing.T) {
	ctx := context.Background()
	schema := testSchema(t)
	s := openStore(t, schema, memory.Builtin{})
	corpus := storetest.NewCorpus(400, 7)
	if _, err := s.Index(ctx, "a", "c1", corpus.Docs); err != nil {
		t.Fatal(err)
	}
	s.WaitIndexBuilds()
	// Back to the schema before 007.
	for _, q := range []string{
		"DROP INDEX chunks_embedding_hnsw",
		"CREATE INDEX chunks_embedding_hnsw ON chunks USING hnsw (embedding vector_cosine_ops)",
		"DELETE FROM schema_migrations WHERE version = 7",
	} {
		if _, err := s.pool.Exec(ctx, q); err != nil {
			t.Fatal(q, err)
		}
	}
	search := func() []memory.Hit {
		var all []memory.Hit
		for i, q := range corpus.Queries[:30] {
			hits, err := s.Search(ctx, "a", memory.Query{Text: q, User: corpus.Users[i%len(corpus.Users)]})
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, hits...)
		}
		return all
	}
	want := search() // exact vector scans: the corpus is small
	s.Close()
	approximateVectors(t)
	s = openStore(t, schema, memory.Builtin{})
	s.WaitIndexBuilds()
	var def string
	if err := s.pool.QueryRow(ctx, "SELECT indexdef FROM pg_indexes WHERE indexname = 'chunks_embedding_hnsw' AND schemaname = current_schema()").Scan(&def); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(def, "halfvec(384)") || !strings.Contains(def, "halfvec_cosine_ops") {
		t.Errorf("vector index after the upgrade: %s; want the halfvec one", def)
	}
	if got := search(); !slices.EqualFunc(got, want, func(a, b memory.Hit) bool {
		return a.Path == b.Path && a.User == b.User && a.StartLine == b.StartLine && a.Score == b.Score
	}) {
		t.Errorf("searches through the halfvec index differ from exact ones before the upgrade")
	}
}

// brief lists candidates by place and vector score.
func brief(cs []memory.Candidate) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "%s %s:%d %.9f\n", c.User, c.Path, c.StartLine, c.VectorScore)
	}
	return b.String()
}
