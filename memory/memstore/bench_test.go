package memstore

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/storetest"
)

// BenchmarkSearch is the embedded store's hybrid search at 100,000 chunks
// of 384-dim builtin vectors, as a user who can see the query's source
// chunk (~21 % of the chunks visible):
//
//	go test -run '^$' -bench . -benchtime 500x ./memory/memstore
func BenchmarkSearch(b *testing.B) {
	corpus := storetest.NewCorpus(100_000, 1)
	b.Run("builtin", func(b *testing.B) { benchSearch(b, corpus, memory.Builtin{}) })
	b.Run("mixture", func(b *testing.B) { benchSearch(b, corpus, corpus.MixtureEmbedder(384)) })
}

func benchSearch(b *testing.B, corpus *storetest.Corpus, e memory.Embedder) {
	ctx := context.Background()
	s, err := New(Options{Embedder: e})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if _, err := s.Index(ctx, "bench", "c1", corpus.Docs); err != nil {
		b.Fatal(err)
	}
	b.Logf("indexed %d chunks in %v", corpus.Chunks, time.Since(start))
	lat := make([]time.Duration, 0, b.N)
	found := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := corpus.Queries[i%len(corpus.Queries)]
		src, user := corpus.Source(q, corpus.Users[i%len(corpus.Users)])
		t0 := time.Now()
		hits, err := s.Search(ctx, "bench", memory.Query{Text: q, User: user})
		lat = append(lat, time.Since(t0))
		if err != nil || len(hits) == 0 {
			b.Fatalf("search: %d hits, %v", len(hits), err)
		}
		if slices.ContainsFunc(hits, func(h memory.Hit) bool { return h.Text == src }) {
			found++
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(storetest.Percentile(lat, 50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(storetest.Percentile(lat, 99).Microseconds())/1000, "p99-ms")
	// As in pgstore's BenchmarkSearch: how often the query's source chunk
	// is among the hits.
	b.ReportMetric(float64(found)/float64(b.N), "source@6")
}
