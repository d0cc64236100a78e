package memstore

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/storetest"
)

// benchChunks is 100,000 unless QUIRE_BENCH_CHUNKS says otherwise
// (QUIRE_BENCH_CHUNKS=1000000 for the 1M-chunk figures).
var benchChunks = func() int {
	if n, err := strconv.Atoi(os.Getenv("QUIRE_BENCH_CHUNKS")); err == nil && n > 0 {
		return n
	}
	return 100_000
}()

// BenchmarkSearch is the embedded store's hybrid search at 100,000 chunks
// (QUIRE_BENCH_CHUNKS) without vectors and with 384-dim builtin or
// mixture vectors, as a user who can see the query's source chunk (~21 %
// of the chunks visible). It reports the live heap after indexing and,
// with vectors, the vector side's recall@24 against the exact scan
// (ivfRecall), the index's lists, how many a query reads and their
// recall (index-recall@24), whether its sieve serves (sieve: the
// builtin embedder's), and the float32 vectors its arena keeps off the
// heap (arena-MiB, in a mapped file):
//
//	go test -run '^$' -bench . -benchtime 500x ./memory/memstore
func BenchmarkSearch(b *testing.B) {
	corpus := storetest.NewCorpus(benchChunks, 1)
	b.Run("none", func(b *testing.B) { benchSearch(b, corpus, memory.None{}) })
	b.Run("builtin", func(b *testing.B) { benchSearch(b, corpus, memory.Builtin{}) })
	b.Run("mixture", func(b *testing.B) { benchSearch(b, corpus, corpus.MixtureEmbedder(384)) })
}

// benchStores holds the indexed store and its heap by embedder model:
// the testing package calls a benchmark more than once (b.N = 1 first),
// and indexing 1M chunks takes minutes.
var benchStores = map[string]benchStore{}

type benchStore struct {
	s    *Store
	heap uint64
}

// benchIndexed returns the store of corpus with embedder e, indexed once.
func benchIndexed(b *testing.B, corpus *storetest.Corpus, e memory.Embedder) benchStore {
	if bs, ok := benchStores[e.Model()]; ok {
		return bs
	}
	s, err := New(Options{Embedder: e})
	if err != nil {
		b.Fatal(err)
	}
	base := liveHeap()
	start := time.Now()
	if _, err := s.Index(context.Background(), "bench", "c1", corpus.Docs); err != nil {
		b.Fatal(err)
	}
	s.cache = &memory.Cache{} // the embedding cache is not the index
	b.Logf("indexed %d chunks in %v", corpus.Chunks, time.Since(start))
	bs := benchStore{s, liveHeap() - base}
	benchStores[e.Model()] = bs
	return bs
}

func benchSearch(b *testing.B, corpus *storetest.Corpus, e memory.Embedder) {
	bs := benchIndexed(b, corpus, e)
	s := bs.s
	corpus.BenchSearch(b, s)
	b.ReportMetric(float64(bs.heap)/(1<<20), "heap-MiB")
	if ix := s.agents["bench"]; ix.ann != nil {
		b.ReportMetric(ivfRecall(b, s, corpus, e, memory.CandidateLimit(0), false), "recall@24")
		b.ReportMetric(ivfRecall(b, s, corpus, e, memory.CandidateLimit(0), true), "index-recall@24")
		b.ReportMetric(float64(ix.ann.probe), "probe")
		b.ReportMetric(float64(ix.ann.arena.n*ix.ann.dims*4)/(1<<20), "arena-MiB")
		b.ReportMetric(float64(len(ix.ann.centroids)), "lists")
		if ix.ann.sieve != nil {
			b.ReportMetric(1, "sieve")
		}
	}
	runtime.KeepAlive(s)
}

// liveHeap returns the bytes of live heap objects after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkIndexAppends is one index run of an agent whose 1,000 users
// have a daily log each, after an entry was appended to 22 of them (a
// group commit's worth): what an index run costs the daemon under
// appends. Without vectors, so that it measures the text side.
func BenchmarkIndexAppends(b *testing.B) {
	benchIndexAppends(b, Options{Embedder: memory.None{}}, 5)
}

// BenchmarkIndexAppendsLong is BenchmarkIndexAppends after 60 entries a
// user: daily logs of several chunks, whose last one an append grows
// (the appends benchmark's logs at 60,000 appends).
func BenchmarkIndexAppendsLong(b *testing.B) {
	benchIndexAppends(b, Options{Embedder: memory.None{}}, 60)
}

// BenchmarkIndexAppendsSieve is BenchmarkIndexAppends with the builtin
// embedder's vectors in an approximate index (its sieve), 50 entries a
// user: what the vector side adds to an index run of a large agent.
func BenchmarkIndexAppendsSieve(b *testing.B) {
	benchIndexAppends(b, Options{Embedder: memory.Builtin{}, ExactVectors: -1}, 50)
}

func benchIndexAppends(b *testing.B, opts Options, entries int) {
	const users, perRun = 1000, 22
	s, err := New(opts)
	if err != nil {
		b.Fatal(err)
	}
	logs := make([]string, users)
	docs := make([]memory.Document, users)
	entry := func(n int) string {
		return fmt.Sprintf("## %02d:%02d\nentry %d: met customer %d about invoice %d\n\n", n/60%24, n%60, n, n%977, n*7)
	}
	for u := range users {
		for e := range entries {
			logs[u] += entry(e*users + u)
		}
		docs[u] = memory.NewDocument("memory/2026-03-01.md", fmt.Sprintf("u%04d", u), logs[u])
	}
	ctx := context.Background()
	if _, err := s.Index(ctx, "a", "c0", docs); err != nil {
		b.Fatal(err)
	}
	n := entries * users
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		for range perRun {
			u := n % users
			logs[u] += entry(n)
			docs[u] = memory.NewDocument("memory/2026-03-01.md", fmt.Sprintf("u%04d", u), logs[u])
			n++
		}
		if _, err := s.Index(ctx, "a", fmt.Sprint("c", i+1), docs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNearest is the vector side of BenchmarkSearch alone with the
// builtin embedder (its sieve): ns/op is a query's nearest chunks, which
// take one core, so that CPU time (-cpuprofile) measures it where other
// work loads the machine.
func BenchmarkNearest(b *testing.B) {
	corpus := storetest.NewCorpus(benchChunks, 1)
	e := memory.Builtin{}
	ix := benchIndexed(b, corpus, e).s.agents["bench"]
	qvs := make([][]float32, len(corpus.Queries))
	users := make([]string, len(corpus.Queries))
	for i, q := range corpus.Queries {
		vs, err := e.Embed(context.Background(), []string{q})
		if err != nil {
			b.Fatal(err)
		}
		qvs[i] = unit(vs[0])
		_, users[i] = corpus.Source(q, corpus.Users[i%len(corpus.Users)])
	}
	n := memory.CandidateLimit(0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ix.nearest(qvs[i%len(qvs)], n, users[i%len(qvs)])
	}
}
