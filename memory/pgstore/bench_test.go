package pgstore

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
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
// 1M chunks), reused by later runs; QUIRE_BENCH_SCHEMA replaces their
// prefix quire_bench, for a branch whose migrations the others' would
// refuse.

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
	prefix := os.Getenv("QUIRE_BENCH_SCHEMA")
	if prefix == "" {
		prefix = "quire_bench"
	}
	schema := fmt.Sprintf("%s_%dk_%s", prefix, benchChunks/1000, kind)
	benchCommit := fmt.Sprintf("corpus-v5-%d", benchChunks)
	s := openStore(b, schema, e)
	var pending int // chunks without a vector: the embedder changed
	if err := s.pool.QueryRow(ctx, "SELECT count(*) FROM chunks WHERE embedding IS NULL").Scan(&pending); err != nil {
		b.Fatal(err)
	}
	if c, _ := s.IndexedCommit(ctx, "bench"); c == benchCommit && pending == 0 {
		// A vector index Open (re)builds, after a migration, is waited for.
		start := time.Now()
		s.WaitIndexBuilds()
		if d := time.Since(start); d > time.Second {
			b.Logf("vector index built in %v", d)
		}
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
// (the chunks are searchable, vectors by an exact scan), index-built-s
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
		withIndex := time.Since(start)
		b.StopTimer()
		b.ReportMetric(float64(st.Chunks)/elapsed.Seconds(), "chunks/s")
		b.ReportMetric(elapsed.Seconds(), "searchable-s")
		b.ReportMetric(withIndex.Seconds(), "index-built-s")
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

// BenchmarkRecall compares the vector side's candidates through the
// halfvec IVFFlat index (the store's way: rerankFactor × n from the index,
// ranked by exact cosine) with those of an exact scan, for n =
// memory.CandidateLimit(0) (what a search asks for) and its top 10, and
// with 1 and 4 × n from the index.
func BenchmarkRecall(b *testing.B) {
	for _, kind := range benchKinds {
		b.Run(kind, func(b *testing.B) { benchRecall(b, kind) })
	}
}

func benchRecall(b *testing.B, kind string) {
	s, corpus := benchStore(b, kind)
	ctx := context.Background()
	n := memory.CandidateLimit(0)
	factors := []int{rerankFactor, 1, 4}
	for i := 0; i < b.N; i++ {
		at10, atN := make([]float64, len(factors)), make([]float64, len(factors))
		const queries = 100
		for j := 0; j < queries; j++ {
			user := corpus.Users[j%len(corpus.Users)]
			vs, err := s.emb.Embed(ctx, []string{corpus.Queries[j]})
			if err != nil {
				b.Fatal(err)
			}
			exact := vectorNeighbours(b, s, vs[0], user, n, n, true)
			for k, f := range factors {
				approx := vectorNeighbours(b, s, vs[0], user, n, f*n, false)
				at10[k] += recall(approx, exact, 10)
				atN[k] += recall(approx, exact, n)
			}
		}
		for k, f := range factors {
			name := fmt.Sprintf("rerank%d", f)
			if f == rerankFactor {
				name = "store"
			}
			b.ReportMetric(at10[k]/queries, "recall@10-"+name)
			b.ReportMetric(atN[k]/queries, fmt.Sprintf("recall@%d-%s", n, name))
		}
	}
}

// vectorNeighbours returns the vector side's n chunks (vectorSQL) from k
// candidates, as ids and exact similarities, best first.
// The index's probes are set first, as vectorSide sets them.
func vectorNeighbours(b *testing.B, s *Store, qv []float32, user string, n, k int, exact bool) []neighbour {
	batch := &pgx.Batch{}
	batch.Queue(setProbesSQL)
	batch.Queue("SELECT id, similarity FROM ("+strings.Replace(vectorSQL(len(qv), exact), ", 1 - (c.embedding <=> $4),", ", 1 - (c.embedding <=> $4) AS similarity,", 1)+") AS r ORDER BY similarity DESC",
		"bench", user, n, pgvector.NewVector(qv), k)
	br := s.pool.SendBatch(context.Background(), batch)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		b.Fatal(err)
	}
	rows, err := br.Query()
	return neighbours(b, rows, err)
}

// recall is the share of exact's top k that approx's top k holds, by
// similarity (a tie with exact's k-th counts).
func recall(approx, exact []neighbour, k int) float64 {
	approx, exact = approx[:min(k, len(approx))], exact[:min(k, len(exact))]
	if len(exact) == 0 {
		return 1
	}
	limit := exact[len(exact)-1].sim - 1e-9
	hit := 0
	for _, a := range approx {
		if a.sim >= limit {
			hit++
		}
	}
	return float64(min(hit, len(exact))) / float64(len(exact))
}

// neighbour is a chunk's id and its similarity to a query.
type neighbour struct {
	id  int64
	sim float64
}

func neighbours(b *testing.B, rows pgx.Rows, err error) []neighbour {
	if err != nil {
		b.Fatal(err)
	}
	var out []neighbour
	for rows.Next() {
		var n neighbour
		if err := rows.Scan(&n.id, &n.sim); err != nil {
			b.Fatal(err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkSearchSides times the steps of a search one by one, as
// BenchmarkSearch's user: the query's embedding, the term statistics,
// the full-text side (its candidates' scoring and their fetch) and the
// vector side, then both sides at once as Search runs them, p50 and p99
// of each.
func BenchmarkSearchSides(b *testing.B) {
	s, corpus := benchStore(b, "builtin")
	ctx := context.Background()
	phases := map[string][]time.Duration{}
	timed := func(name string, f func() error) {
		start := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		phases[name] = append(phases[name], time.Since(start))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := corpus.Queries[i%len(corpus.Queries)]
		_, user := corpus.Source(q, corpus.Users[i%len(corpus.Users)])
		mq := memory.Query{Text: q, User: user}
		var qv []float32
		timed("embed", func() (err error) { qv, err = s.queryVector(ctx, "bench", q); return err })
		var st agentStats
		timed("stats", func() (err error) { st, err = s.termStats(ctx, "bench", user, s.queryTerms(mq)); return err })
		bq, n := newBM25Query(st), memory.CandidateLimit(0)
		var scored []scoredChunk
		timed("text-score", func() (err error) { scored, err = s.scoreCandidates(ctx, st.scopes, bq); return err })
		timed("text-fetch", func() error { _, err := s.fetchCandidates(ctx, scored[:min(n, len(scored))], qv); return err })
		timed("text", func() error { _, err := s.textSide(ctx, st.scopes, bq, qv, n); return err })
		timed("vector", func() error { _, err := s.vectorSide(ctx, "bench", user, bq, qv, n, false); return err })
		timed("sides", func() error {
			_, err := both([]func() ([]memory.Candidate, error){
				func() ([]memory.Candidate, error) { return s.textSide(ctx, st.scopes, bq, qv, n) },
				func() ([]memory.Candidate, error) { return s.vectorSide(ctx, "bench", user, bq, qv, n, false) },
			})
			return err
		})
		timed("search", func() error { _, err := s.Search(ctx, "bench", mq); return err })
	}
	b.StopTimer()
	for _, name := range []string{"embed", "stats", "text-score", "text-fetch", "text", "vector", "sides", "search"} {
		b.ReportMetric(float64(storetest.Percentile(phases[name], 50).Microseconds())/1000, name+"-p50-ms")
		b.ReportMetric(float64(storetest.Percentile(phases[name], 99).Microseconds())/1000, name+"-p99-ms")
	}
}
