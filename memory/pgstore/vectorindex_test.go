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

// approximateVectors makes every agent's vector side go through the
// vector index, built however few vectors the table holds, until the
// test ends.
func approximateVectors(t *testing.T) {
	oldExact, oldMin := exactVectorChunks, minIndexedVectors
	t.Cleanup(func() { exactVectorChunks, minIndexedVectors = oldExact, oldMin })
	exactVectorChunks, minIndexedVectors = 0, 0
}

// vectorIndexes returns the definitions of the vector indexes of chunks
// by name: valid ones, and any other index over the embeddings.
func vectorIndexes(t testing.TB, s *Store) map[string]string {
	t.Helper()
	return namedDefinitions(t, s, `SELECT i.relname, pg_get_indexdef(i.oid) || CASE WHEN x.indisvalid THEN '' ELSE ' (invalid)' END
		FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
		WHERE x.indrelid = 'chunks'::regclass AND pg_get_indexdef(i.oid) LIKE '%embedding%'`)
}

// namedDefinitions returns the rows of query, each a name and a
// definition, by name.
func namedDefinitions(t testing.TB, s *Store, query string) map[string]string {
	t.Helper()
	rows, err := s.pool.Query(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			t.Fatal(err)
		}
		out[name] = def
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameCandidates reports whether a and b hold the same chunks in the
// same order with the same scores.
func sameCandidates(a, b []memory.Candidate) bool {
	return slices.EqualFunc(a, b, func(x, y memory.Candidate) bool {
		return x.User == y.User && x.Path == y.Path && x.StartLine == y.StartLine && x.VectorScore == y.VectorScore && x.TextScore == y.TextScore
	})
}

// TestVectorIndexReranksExactly: the vector side finds its candidates
// through the halfvec IVFFlat index (the planner matches the indexed
// expression) and returns them with the stored vectors' exact cosines,
// in exact order: on a corpus small enough for the index to miss nothing
// (one list), what an exact scan returns.
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
			if !strings.Contains(plan, "Index Scan using chunks_embedding_ivf1 ") {
				t.Errorf("the vector side does not read the IVFFlat index:\n%s", plan)
			}
		}
	}
}

// TestVectorSideSetsProbes: an approximate vector search sets the
// connection's ivfflat.probes from the index there is (its lists: one
// here, so one probe), whatever the connection had before; without it a
// search probes what the last user of the connection left, or pgvector's
// default of one list at any size.
func TestVectorSideSetsProbes(t *testing.T) {
	ctx := context.Background()
	approximateVectors(t)
	s, err := Open(ctx, Options{URL: databaseURL(t), Schema: testSchema(t), Embedder: memory.Builtin{}, MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	corpus := storetest.NewCorpus(200, 5)
	if _, err := s.Index(ctx, "a", "c1", corpus.Docs); err != nil {
		t.Fatal(err)
	}
	s.WaitIndexBuilds()
	if _, ok := vectorIndexes(t, s)["chunks_embedding_ivf1"]; !ok {
		t.Fatalf("no IVFFlat index of one list: %v", vectorIndexes(t, s))
	}
	if _, err := s.pool.Exec(ctx, "SET ivfflat.probes = 7"); err != nil {
		t.Fatal(err)
	}
	vs, err := s.emb.Embed(ctx, []string{corpus.Queries[0]})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.vectorSide(ctx, "a", corpus.Users[0], &bm25Query{}, vs[0], memory.CandidateLimit(0), false); err != nil {
		t.Fatal(err)
	}
	var probes string
	if err := s.pool.QueryRow(ctx, "SHOW ivfflat.probes").Scan(&probes); err != nil {
		t.Fatal(err)
	}
	if probes != "1" {
		t.Errorf("ivfflat.probes after a search: %s, want 1 (the index's one list)", probes)
	}
	// The value read is kept: the next search sets it without the
	// catalog, until it is probesTTL old or the store checks its index.
	search := func() string {
		t.Helper()
		if _, err := s.pool.Exec(ctx, "SET ivfflat.probes = 7"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.vectorSide(ctx, "a", corpus.Users[0], &bm25Query{}, vs[0], memory.CandidateLimit(0), false); err != nil {
			t.Fatal(err)
		}
		if err := s.pool.QueryRow(ctx, "SHOW ivfflat.probes").Scan(&probes); err != nil {
			t.Fatal(err)
		}
		return probes
	}
	s.probes.store("3")
	if p := search(); p != "3" {
		t.Errorf("ivfflat.probes with a fresh cached value 3: %s", p)
	}
	s.probes.mu.Lock()
	s.probes.read = s.probes.read.Add(-probesTTL)
	s.probes.mu.Unlock()
	if p := search(); p != "1" {
		t.Errorf("ivfflat.probes with a stale cached value: %s, want 1 from the catalog", p)
	}
	s.probes.store("3")
	s.requestVectorIndex()
	s.WaitIndexBuilds()
	if p := search(); p != "1" {
		t.Errorf("ivfflat.probes after the store checked its index: %s, want 1 from the catalog", p)
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

// TestMigrationIVFFlatIndex: a database from before migration 010,
// whose vector index is the HNSW one over halfvecs (007) or over the
// full vectors (before 007), gets the IVFFlat index in its place, built
// in the background when the store opens; searches through it return
// what exact vector scans returned before the upgrade.
func TestMigrationIVFFlatIndex(t *testing.T) {
	for _, tc := range []struct {
		name  string
		index string
		from  string
	}{
		{"halfvec-hnsw", "CREATE INDEX chunks_embedding_hnsw ON chunks USING hnsw ((embedding::halfvec(384)) halfvec_cosine_ops)", "DELETE FROM schema_migrations WHERE version = 10"},
		{"vector-hnsw", "CREATE INDEX chunks_embedding_hnsw ON chunks USING hnsw (embedding vector_cosine_ops)", "DELETE FROM schema_migrations WHERE version IN (7, 10)"},
	} {
		t.Run(tc.name, func(t *testing.T) { testMigrationIVFFlat(t, tc.index, tc.from) })
	}
}

func testMigrationIVFFlat(t *testing.T, index, from string) {
	ctx := context.Background()
	schema := testSchema(t)
	s := openStore(t, schema, memory.Builtin{})
	corpus := storetest.NewCorpus(400, 7)
	if _, err := s.Index(ctx, "a", "c1", corpus.Docs); err != nil {
		t.Fatal(err)
	}
	s.WaitIndexBuilds()
	// Back to the schema before.
	for _, q := range []string{index, from} {
		if _, err := s.pool.Exec(ctx, q); err != nil {
			t.Fatal(q, err)
		}
	}
	search := func() []memory.Hit { return searchQueries(t, s, corpus, 30) }
	want := search() // exact vector scans: the corpus is small
	s.Close()
	approximateVectors(t)
	s = openStore(t, schema, memory.Builtin{})
	s.WaitIndexBuilds()
	got := vectorIndexes(t, s)
	def, ok := got["chunks_embedding_ivf1"]
	if len(got) != 1 || !ok || !strings.Contains(def, "USING ivfflat (((embedding)::halfvec(384)) halfvec_cosine_ops) WITH (lists='1')") {
		t.Errorf("vector indexes after the upgrade: %v; want the IVFFlat one of one list", got)
	}
	if got := search(); !sameHits(got, want) {
		t.Errorf("searches through the IVFFlat index differ from exact ones before the upgrade")
	}
}

// TestVectorIndexFollowsTableSize: no vector index is built below
// minIndexedVectors vectors; once the table holds them, one is, with
// lists for its size; once it has grown rebuildGrowth times past the
// rows of those lists, another with more lists replaces it, and searches
// probe a third of the square root of its lists, rounded up.
func TestVectorIndexFollowsTableSize(t *testing.T) {
	ctx := context.Background()
	approximateVectors(t)
	minIndexedVectors = 1000
	s := openStore(t, testSchema(t), memory.Builtin{})
	// check has the store look at its vector index with fresh table
	// statistics, which autovacuum keeps in a live database.
	check := func() map[string]string {
		s.WaitIndexBuilds()
		if _, err := s.pool.Exec(ctx, "ANALYZE chunks"); err != nil {
			t.Fatal(err)
		}
		s.requestVectorIndex()
		s.WaitIndexBuilds()
		return vectorIndexes(t, s)
	}
	probes := func() string {
		var p string
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, setProbesSQL); err != nil {
				return err
			}
			return tx.QueryRow(ctx, "SHOW ivfflat.probes").Scan(&p)
		})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, step := range []struct {
		agent  string
		chunks int
		want   string // the vector index's name, "" for none
		probes string
	}{
		{"a", 600, "", "1"},                       // 600 vectors: below minIndexedVectors
		{"b", 900, "chunks_embedding_ivf1", "1"},  // 1,500: one list
		{"c", 1500, "chunks_embedding_ivf1", "1"}, // 3,000: less than 4 × 1,000
		{"d", 1500, "chunks_embedding_ivf4", "1"}, // 4,500: rebuilt with 4 lists
	} {
		corpus := storetest.NewCorpus(step.chunks, 11)
		st, err := s.Index(ctx, step.agent, "c1", corpus.Docs)
		if err != nil {
			t.Fatal(err)
		}
		got := check()
		if _, ok := got[step.want]; len(got) != min(len(step.want), 1) || (step.want != "" && !ok) {
			t.Errorf("after %d chunks for agent %s: vector indexes %v, want %q", st.Chunks, step.agent, got, step.want)
		}
		if p := probes(); p != step.probes {
			t.Errorf("after %d chunks for agent %s: ivfflat.probes %s, want %s", st.Chunks, step.agent, p, step.probes)
		}
	}
	// An index of 100 lists (another daemon's, say): 10/3 probes, up.
	if _, err := s.pool.Exec(ctx, "CREATE INDEX chunks_embedding_ivf100 ON chunks USING ivfflat ((embedding::halfvec(384)) halfvec_cosine_ops) WITH (lists = 100)"); err != nil {
		t.Fatal(err)
	}
	if p := probes(); p != "4" {
		t.Errorf("with an index of 100 lists: ivfflat.probes %s, want 4", p)
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
