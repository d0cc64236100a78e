package memstore

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/storetest"
)

// ivfRecall returns the share of the exact n nearest vectors (as the
// corpus's queries' users see them) that s finds over the corpus's
// queries: through its search path (ix.nearest: the sieve of an index
// that scans), or with index set the share of them in the lists a query
// reads at the index's probe, even when searches scan (ivf.scan).
func ivfRecall(t testing.TB, s *Store, corpus *storetest.Corpus, e memory.Embedder, n int, index bool) float64 {
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
		for _, h := range ix.nearest(qv, n, user) {
			got[h.pos] = true
		}
		if index {
			got = map[int]bool{}
			probed := map[int32]bool{}
			for _, l := range ix.ann.listOrder(qv)[:ix.ann.probe] {
				probed[int32(l.pos)] = true
			}
			for _, h := range exact {
				got[h.pos] = probed[ix.ann.list[h.pos]]
			}
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

// The vector side finds at least 98 % of the exact scan's candidates
// (recall@24, what a default search takes) on the benchmark corpus, with
// vectors of topic geometry (as an embedding model's), which the
// approximate index serves at its probe, and with the builtin embedder's,
// which its sieve serves (maxProbeShare: their calibrated probe reads
// most of the lists). BenchmarkSearch reports the recall at 100k and 1M
// chunks.
func TestIVFRecall(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("indexes 20,000 chunks")
	}
	corpus := storetest.NewCorpus(20_000, 3)
	for _, tc := range []struct {
		e     memory.Embedder
		index bool // the index itself must reach the recall
	}{{corpus.MixtureEmbedder(384), true}, {memory.Builtin{}, false}} {
		t.Run(tc.e.Model(), func(t *testing.T) {
			s, err := New(Options{Embedder: tc.e})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Index(context.Background(), "bench", "c1", corpus.Docs); err != nil {
				t.Fatal(err)
			}
			ann := s.agents["bench"].ann
			n := memory.CandidateLimit(0)
			search, index := ivfRecall(t, s, corpus, tc.e, n, false), ivfRecall(t, s, corpus, tc.e, n, true)
			t.Logf("recall@%d: search %.4f, index %.4f (%d lists, probe %d, scan %v)", n, search, index, len(ann.centroids), ann.probe, ann.scan)
			if search < 0.98 || tc.index && index < 0.98 {
				t.Errorf("recall@%d: search %.4f, index %.4f, want >= 0.98", n, search, index)
			}
		})
	}
}

// An index whose vectors cluster (a few tight clusters, as an embedding
// model's topics can be) serves queries from its lists, not a sieve: the
// lists hold every vector of each scope, and a query finds at least
// 98 % of the exact scan's 24 nearest among the lists it probes.
func TestIVFLists(t *testing.T) {
	const n, dims, clusters = 12_000, 32, 16
	r := rand.New(rand.NewPCG(7, 8))
	centre := make([][]float32, clusters)
	for c := range centre {
		centre[c] = make([]float32, dims)
		centre[c][c%dims] = 1
	}
	ix := &agentIndex{}
	users := []string{"", "ann", "bob"}
	for u, user := range users {
		for i := range n / len(users) {
			v := slices.Clone(centre[(u*n/len(users)+i)%clusters])
			for d := range v {
				v[d] += float32(r.NormFloat64()) * 0.05
			}
			memory.Normalize(v)
			ix.chunks = append(ix.chunks, memory.Chunk{User: user, Path: "memory/log.md", StartLine: i + 1})
			ix.vectors = append(ix.vectors, v)
		}
	}
	ix.byUser = byUser(ix.chunks)
	ix.index(vectorPlan{threshold: 0}, nil, nil)
	x := ix.ann
	if x == nil || x.scan || x.sieve != nil {
		t.Fatalf("clustered vectors scan: %d lists, probe %v", len(x.centroids), x.probe)
	}
	for user, positions := range ix.byUser {
		var listed []int
		for _, l := range x.members[user] {
			for _, p := range l {
				listed = append(listed, int(p))
			}
		}
		slices.Sort(listed)
		if !slices.Equal(listed, positions) {
			t.Fatalf("user %q: lists hold %d positions, want %d", user, len(listed), len(positions))
		}
	}
	found, want := 0, 0
	for q := range 50 {
		qv := slices.Clone(centre[q%clusters])
		for d := range qv {
			qv[d] += float32(r.NormFloat64()) * 0.05
		}
		memory.Normalize(qv)
		user := users[q%len(users)]
		exact := (&agentIndex{chunks: ix.chunks, vectors: ix.vectors, byUser: ix.byUser}).nearest(qv, 24, user)
		got := map[int]bool{}
		for _, h := range ix.nearest(qv, 24, user) {
			got[h.pos] = true
		}
		for _, h := range exact {
			if got[h.pos] {
				found++
			}
		}
		want += len(exact)
	}
	if recall := float64(found) / float64(want); recall < 0.98 {
		t.Errorf("recall@24 from the lists: %.4f, want >= 0.98 (%d lists, probe %d)", recall, len(x.centroids), x.probe)
	}
}
