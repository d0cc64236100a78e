package memstore

import (
	"context"
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
	corpus.BenchSearch(b, s)
}
