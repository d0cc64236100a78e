package pgstore

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/storetest"
)

// Benchmarks at 100,000 chunks (QUIRE_BENCH_CHUNKS) of 384-dim builtin
// or mixture vectors. Run with
//
//	go test -run '^$' -bench . -benchtime 1x ./memory/pgstore
//
// (BenchmarkSearch wants more iterations: -benchtime 2000x). The corpus
// lives in schemas quire_bench_100k_builtin and _mixture (_1000k_… at
// 1M chunks), reused by later runs.

// benchChunks is 100,000 unless QUIRE_BENCH_CHUNKS says otherwise
// (QUIRE_BENCH_CHUNKS=1000000 for the 1M-chunk figures).
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

// benchStore returns the store holding the 100,000-chunk corpus embedded
// with the named embedder ("builtin", or "mixture" for
// storetest.Corpus.MixtureEmbedder), building it on first use.
func benchStore(b *testing.B, kind string) (*Store, *storetest.Corpus) {
	ctx := context.Background()
	corpus := storetest.NewCorpus(benchChunks, 1)
	var e memory.Embedder = memory.Builtin{}
	if kind == "mixture" {
		e = corpus.MixtureEmbedder(384)
	}
	schema := fmt.Sprintf("quire_bench_%dk_%s", benchChunks/1000, kind)
	benchCommit := fmt.Sprintf("corpus-v5-%d", benchChunks)
	s := openStore(b, schema, e)
	var pending int // chunks without a vector: the embedder changed
	if err := s.pool.QueryRow(ctx, "SELECT count(*) FROM chunks WHERE embedding IS NULL").Scan(&pending); err != nil {
		b.Fatal(err)
	}
	if c, _ := s.IndexedCommit(ctx, "bench"); c == benchCommit && pending == 0 {
		return s, corpus
	}
	s.Close()
	dropSchema(b, schema)
	s = openStore(b, schema, e)
	start := time.Now()
	if _, err := s.Index(ctx, "bench", benchCommit, corpus.Docs); err != nil {
		b.Fatal(err)
	}
	b.Logf("indexed %d chunks in %v", corpus.Chunks, time.Since(start))
	s.WaitIndexBuilds()
	b.Logf("vector index built after %v", time.Since(start))
	if _, err := s.pool.Exec(ctx, "ANALYZE chunks"); err != nil {
		b.Fatal(err)
	}
	return s, corpus
}

var benchKinds = []string{"builtin", "mixture"}

// BenchmarkBulkIndex indexes the whole corpus into a fresh schema with the
// builtin embedder (chunking, embedding, CopyFrom, full-text indexes and
// term statistics): chunks/s and searchable-s are until Index returns
// (the chunks are searchable, vectors by an exact scan), hnsw-built-s
// until the vector index built after the commit exists.
func BenchmarkBulkIndex(b *testing.B) {
	ctx := context.Background()
	corpus := storetest.NewCorpus(benchChunks, 1)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		schema := fmt.Sprintf("quire_bench_bulk_%d_%d", os.Getpid(), i)
		dropSchema(b, schema)
		s, err := Open(ctx, Options{URL: databaseURL(b), Schema: schema, Embedder: memory.Builtin{}, Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		st, err := s.Index(ctx, "bench", "c1", corpus.Docs)
		if err != nil {
			b.Fatal(err)
		}
		elapsed := time.Since(start)
		s.WaitIndexBuilds()
		withHNSW := time.Since(start)
		b.StopTimer()
		b.ReportMetric(float64(st.Chunks)/elapsed.Seconds(), "chunks/s")
		b.ReportMetric(elapsed.Seconds(), "searchable-s")
		b.ReportMetric(withHNSW.Seconds(), "hnsw-built-s")
		s.Close()
		dropSchema(b, schema)
	}
}

// BenchmarkSearch is the hybrid search as a user who can see the chunk
// the query was drawn from (agent-level + own memory, ~21 % of the chunks
// visible), query embedding included.
func BenchmarkSearch(b *testing.B) {
	for _, kind := range benchKinds {
		b.Run(kind, func(b *testing.B) { benchSearch(b, kind) })
	}
}

func benchSearch(b *testing.B, kind string) {
	s, corpus := benchStore(b, kind)
	ctx := context.Background()
	for _, q := range corpus.Queries[:20] { // warm up
		s.Search(ctx, "bench", memory.Query{Text: q, User: corpus.Users[0]})
	}
	corpus.BenchSearch(b, s)
}

// BenchmarkRecall compares the HNSW top 10 with the scope filter against
// the exact top 10 (index scans off). The store's own way is the first
// variant: iterative scan (relaxed order), ef_search = DefaultEFSearch,
// 4 × limit candidates re-sorted by distance.
func BenchmarkRecall(b *testing.B) {
	for _, kind := range benchKinds {
		b.Run(kind, func(b *testing.B) { benchRecall(b, kind) })
	}
}

func benchRecall(b *testing.B, kind string) {
	s, corpus := benchStore(b, kind)
	ctx := context.Background()
	const q = `SELECT id, embedding <=> $2 FROM chunks WHERE agent = 'bench' AND (user_id = '' OR user_id = $1) AND embedding IS NOT NULL ORDER BY embedding <=> $2 LIMIT $3`
	const unscoped = `SELECT id, embedding <=> $1 FROM chunks WHERE embedding IS NOT NULL ORDER BY embedding <=> $1 LIMIT $2`
	variants := []struct {
		name, scan string
		ef, limit  int
	}{
		{"store", "relaxed_order", DefaultEFSearch, memory.CandidateLimit(10)},
		{"relaxed-ef100-limit10", "relaxed_order", 100, 10},
		{"strict-ef100-limit10", "strict_order", 100, 10},
		{"relaxed-ef200-limit40", "relaxed_order", 200, 40},
		{"unscoped-ef100-limit10", "off", 100, 10},
	}
	for i := 0; i < b.N; i++ {
		sums := make([]float64, len(variants))
		n := 100
		for j := 0; j < n; j++ {
			user := corpus.Users[j%len(corpus.Users)]
			vs, _ := s.emb.Embed(ctx, []string{corpus.Queries[j]})
			v := pgvector.NewVector(vs[0])
			var exact []neighbour
			err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, "SET LOCAL enable_indexscan = off"); err != nil {
					return err
				}
				rows, err := tx.Query(ctx, q, user, v, 10)
				exact = neighbours(b, rows, err)
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			var exactAll []neighbour
			err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, "SET LOCAL enable_indexscan = off"); err != nil {
					return err
				}
				rows, err := tx.Query(ctx, unscoped, v, 10)
				exactAll = neighbours(b, rows, err)
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			for k, vr := range variants {
				query, args, want := q, []any{user, v, vr.limit}, exact
				if vr.scan == "off" {
					query, args, want = unscoped, []any{v, vr.limit}, exactAll
				}
				limit := want[len(want)-1].dist + 1e-6
				var approx []neighbour
				err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
					if _, err := tx.Exec(ctx, fmt.Sprintf("SET LOCAL hnsw.ef_search = %d; SET LOCAL hnsw.iterative_scan = %s", vr.ef, vr.scan)); err != nil {
						return err
					}
					rows, err := tx.Query(ctx, query, args...)
					approx = neighbours(b, rows, err)
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				slices.SortFunc(approx, func(a, b neighbour) int { return cmp.Compare(a.dist, b.dist) })
				approx = approx[:min(10, len(approx))]
				hit := 0
				for _, a := range approx {
					if a.dist <= limit {
						hit++
					}
				}
				sums[k] += float64(hit) / float64(len(want))
			}
		}
		for k, vr := range variants {
			b.ReportMetric(sums[k]/float64(n), "recall@10-"+vr.name)
		}
	}
}

type neighbour struct {
	id   int64
	dist float64
}

func neighbours(b *testing.B, rows pgx.Rows, err error) []neighbour {
	if err != nil {
		b.Fatal(err)
	}
	var out []neighbour
	for rows.Next() {
		var n neighbour
		if err := rows.Scan(&n.id, &n.dist); err != nil {
			b.Fatal(err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return out
}
