package pgstore

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/storetest"
)

// Benchmarks at 100,000 chunks of 384-dim builtin vectors. Run with
//
//	go test -run '^$' -bench . -benchtime 1x ./memory/pgstore
//
// (BenchmarkSearch wants more iterations: -benchtime 2000x). The corpus
// lives in schema quire_bench_100k and is reused by later runs.

const (
	benchSchema = "quire_bench_100k"
	benchCommit = "corpus-v1-100000"
)

// benchChunks is 100,000 unless QUIRE_BENCH_CHUNKS says otherwise (for
// quick experiments; the bulk benchmark only).
var benchChunks = func() int {
	if n, err := strconv.Atoi(os.Getenv("QUIRE_BENCH_CHUNKS")); err == nil && n > 0 {
		return n
	}
	return 100_000
}()

func dropSchema(b *testing.B, schema string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, databaseURL(b))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
		b.Fatal(err)
	}
}

func benchStore(b *testing.B) (*Store, *storetest.Corpus) {
	ctx := context.Background()
	corpus := storetest.NewCorpus(100_000, 1)
	s := openStore(b, benchSchema, memory.Builtin{})
	if c, _ := s.IndexedCommit(ctx, "bench"); c == benchCommit {
		return s, corpus
	}
	s.Close()
	dropSchema(b, benchSchema)
	s = openStore(b, benchSchema, memory.Builtin{})
	start := time.Now()
	if _, err := s.Index(ctx, "bench", benchCommit, corpus.Docs); err != nil {
		b.Fatal(err)
	}
	b.Logf("indexed %d chunks in %v", corpus.Chunks, time.Since(start))
	if _, err := s.pool.Exec(ctx, "ANALYZE chunks"); err != nil {
		b.Fatal(err)
	}
	return s, corpus
}

// BenchmarkBulkIndex indexes the whole corpus into a fresh schema with the
// builtin embedder (chunking, embedding, CopyFrom, GIN and HNSW upkeep).
func BenchmarkBulkIndex(b *testing.B) {
	ctx := context.Background()
	corpus := storetest.NewCorpus(benchChunks, 1)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		schema := fmt.Sprintf("quire_bench_bulk_%d", i)
		dropSchema(b, schema)
		s := openStore(b, schema, memory.Builtin{})
		b.StartTimer()
		start := time.Now()
		st, err := s.Index(ctx, "bench", "c1", corpus.Docs)
		if err != nil {
			b.Fatal(err)
		}
		elapsed := time.Since(start)
		b.StopTimer()
		b.ReportMetric(float64(st.Chunks)/elapsed.Seconds(), "chunks/s")
		s.Close()
		dropSchema(b, schema)
	}
}

// BenchmarkSearch is the hybrid search as a user (agent-level + own
// memory, ~21 % of the chunks visible), query embedding included.
func BenchmarkSearch(b *testing.B) {
	s, corpus := benchStore(b)
	ctx := context.Background()
	for _, q := range corpus.Queries[:20] { // warm up
		s.Search(ctx, "bench", memory.Query{Text: q, User: corpus.Users[0]})
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		hits, err := s.Search(ctx, "bench", memory.Query{Text: corpus.Queries[i%len(corpus.Queries)], User: corpus.Users[i%len(corpus.Users)]})
		lat = append(lat, time.Since(start))
		if err != nil || len(hits) == 0 {
			b.Fatalf("search: %d hits, %v", len(hits), err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(storetest.Percentile(lat, 50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(storetest.Percentile(lat, 99).Microseconds())/1000, "p99-ms")
}

// BenchmarkRecall compares the HNSW top 10 (with the scope filter and
// iterative scan) with the exact top 10 (index scans off).
func BenchmarkRecall(b *testing.B) {
	s, corpus := benchStore(b)
	ctx := context.Background()
	const q = `SELECT id FROM chunks WHERE agent = 'bench' AND (user_id = '' OR user_id = $1) AND embedding IS NOT NULL ORDER BY embedding <=> $2 LIMIT 10`
	var plan string
	for i := 0; i < b.N; i++ {
		var sum float64
		n := 100
		for j := 0; j < n; j++ {
			user := corpus.Users[j%len(corpus.Users)]
			vs, _ := memory.Builtin{}.Embed(ctx, []string{corpus.Queries[j]})
			v := pgvector.NewVector(vs[0])
			rows, err := s.pool.Query(ctx, q, user, v)
			approx := ids(b, rows, err)
			if plan == "" {
				rows, _ := s.pool.Query(ctx, "EXPLAIN "+q, user, v)
				for rows.Next() {
					var line string
					rows.Scan(&line)
					plan += line + "\n"
				}
				rows.Close()
			}
			var exact map[int64]bool
			err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, "SET LOCAL enable_indexscan = off"); err != nil {
					return err
				}
				rows, err := tx.Query(ctx, q, user, v)
				exact = ids(b, rows, err)
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			hit := 0
			for id := range exact {
				if approx[id] {
					hit++
				}
			}
			sum += float64(hit) / float64(len(exact))
		}
		b.ReportMetric(sum/float64(n), "recall@10")
	}
	b.Logf("plan:\n%s", plan)
}

func ids(b *testing.B, rows pgx.Rows, err error) map[int64]bool {
	if err != nil {
		b.Fatal(err)
	}
	m := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			b.Fatal(err)
		}
		m[id] = true
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return m
}
