package memstore

import (
	"context"
	"testing"

	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/storetest"
)

// ivfRecall returns the share of the exact n nearest vectors (as the
// corpus's queries' users see them) that the approximate index of s
// finds, over the corpus's queries.
func ivfRecall(t testing.TB, s *Store, corpus *storetest.Corpus, e memory.Embedder, n int) float64 {
	ctx := context.Background()
	ix := s.agents["bench"]
	if ix == nil || ix.ann == nil {
		t.Fatal("no approximate index")
	}
	found, want := 0, 0
	for i, q := range corpus.Queries {
		_, user := corpus.Source(q, corpus.Users[i%len(corpus.Users)])
		vs, err := e.Embed(ctx, []string{q})
		if err != nil {
			t.Fatal(err)
		}
		qv := unit(vs[0])
		exact := (&agentIndex{chunks: ix.chunks, vectors: ix.vectors, byUser: ix.byUser}).nearest(qv, n, user)
		got := map[int]bool{}
		for _, h := range ix.ann.nearest(ix, qv, n, user) {
			got[h.pos] = true
		}
		for _, h := range exact {
			if got[h.pos] {
				found++
			}
		}
		want += len(exact)
	}
	return float64(found) / float64(want)
}

// The approximate index finds at least 98 % of the exact scan's vector
// candidates (recall@24, the candidates a default search takes) on the
// benchmark corpus, with the builtin embedder and with one of topic
// geometry; BenchmarkSearch reports it at 100k and 1M chunks.
func TestIVFRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes 20,000 chunks")
	}
	corpus := storetest.NewCorpus(20_000, 3)
	for _, e := range []memory.Embedder{memory.Builtin{}, corpus.MixtureEmbedder(384)} {
		t.Run(e.Model(), func(t *testing.T) {
			s, err := New(Options{Embedder: e})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Index(context.Background(), "bench", "c1", corpus.Docs); err != nil {
				t.Fatal(err)
			}
			n := memory.CandidateLimit(0)
			if r := ivfRecall(t, s, corpus, e, n); r < 0.98 {
				t.Errorf("recall@%d = %.4f, want >= 0.98", n, r)
			} else {
				t.Logf("recall@%d = %.4f (%d lists, probe %d)", n, r, len(s.agents["bench"].ann.centroids), s.agents["bench"].ann.probe)
			}
		})
	}
}
