package memstore

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/storetest"
)

// A sieve's columns hold the code of every vector of each scope, and
// its nearest chunks are the exact scan's, with their exact cosines,
// when it keeps every visible chunk as a candidate (a small index): for
// a short query (scored by its heavy components), a dense one (scored by
// all), and with vectors filled in after the sieve was made. When it
// keeps a few of them (a large index), they are the best by their
// partial scores, which are the codes' over the heavy components and
// within the codes' error of the vectors' (checkPartial).
func TestSieve(t *testing.T) {
	corpus := storetest.NewCorpus(1000, 7)
	ix := builtinIndex(t, corpus)
	sv := ix.ann.sieve
	if sv == nil {
		t.Fatal("the builtin embedder's index has no sieve")
	}
	checkColumns(t, ix, sv)
	r := rand.New(rand.NewPCG(3, 4))
	dense := make([]float32, sv.dims)
	for d := range dense {
		dense[d] = float32(r.NormFloat64())
	}
	memory.Normalize(dense)
	short := builtinVector(t, corpus.Queries[0])
	if _, part := heavy(short); !part {
		t.Fatalf("a short query is sieved by all its %d components", len(slices.DeleteFunc(slices.Clone(short), func(f float32) bool { return f == 0 })))
	}
	if _, part := heavy(dense); part {
		t.Fatal("a dense query is sieved by part of its components")
	}
	t.Run("partial scores", func(t *testing.T) {
		dims, _ := heavy(short)
		for _, user := range []string{"", corpus.Users[1]} {
			checkPartial(t, ix, sv, short, dims, user)
		}
	})
	for _, tc := range []struct {
		name string
		qv   []float32
		late bool
	}{
		{"short query", short, false},
		{"dense query", dense, false},
		{"vectors filled in late", short, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := ix
			if tc.late {
				ix = lateIndex(t, ix, tc.qv)
			}
			for _, user := range []string{"", corpus.Users[1]} {
				exact := (&agentIndex{chunks: ix.chunks, vectors: ix.vectors, byUser: ix.byUser}).nearest(tc.qv, 24, user)
				got := ix.nearest(tc.qv, 24, user)
				sortScored(exact)
				sortScored(got)
				if !slices.Equal(got, exact) {
					t.Fatalf("user %q: nearest\n%v\nwant\n%v", user, got, exact)
				}
			}
		})
	}
}

// checkPartial checks the candidates the sieve sv of ix keeps of each
// scope user sees, scored by the components dims of qv, when it keeps a
// few: the best by the codes' partial scores, computed here one member
// at a time, each within the codes' error of the vectors' partial dot
// product (the partial score is in units of the query code's scale).
func checkPartial(t *testing.T, ix *agentIndex, sv *sieve, qv []float32, dims []int, user string) {
	t.Helper()
	q := newQueryCode(qv)
	for _, scope := range scopes(user) {
		c := sv.scopes[scope]
		if c == nil {
			continue
		}
		m := len(c.pos)
		keep := min(10, m/4)
		if keep == 0 {
			continue
		}
		cands := topScored{n: keep}
		sv.offer(c, dims, &q, &cands)
		want := topScored{n: keep}
		for j, p := range c.pos {
			var acc int32
			for _, d := range dims {
				acc += int32(c.code[d*m+j]) * q.wide[d]
			}
			score := float64(float32(acc) * c.scale[j])
			want.offer(scored{int(p), score})
			var exact, bound float64
			v := ix.vectors[p]
			for _, d := range dims {
				vd, qd := float64(v[d]), float64(qv[d])
				exact += vd * qd
				bound += math.Abs(vd)*float64(q.scale)/2 + math.Abs(qd)*float64(c.scale[j])/2 + float64(q.scale*c.scale[j])/4
			}
			if diff := math.Abs(score*float64(q.scale) - exact); diff > bound*1.01+1e-6 {
				t.Fatalf("scope %q, position %d: partial score %g × %g is %g off the vector's %g (bound %g)", scope, p, score, q.scale, diff, exact, bound)
			}
		}
		got, exp := cands.heap, want.heap
		sortScored(got)
		sortScored(exp)
		if !slices.Equal(got, exp) {
			t.Fatalf("scope %q: candidates\n%v\nwant\n%v", scope, got, exp)
		}
	}
}

// builtinIndex returns the index of corpus with the builtin embedder,
// every agent approximate.
func builtinIndex(t *testing.T, corpus *storetest.Corpus) *agentIndex {
	t.Helper()
	s, err := New(Options{Embedder: memory.Builtin{}, ExactVectors: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Index(context.Background(), "a", "c1", corpus.Docs); err != nil {
		t.Fatal(err)
	}
	return s.agents["a"]
}

func builtinVector(t *testing.T, text string) []float32 {
	t.Helper()
	vs, err := memory.Builtin{}.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	return unit(vs[0])
}

// checkColumns checks that sv holds, by scope, the positions of ix's
// vectors in order and their codes.
func checkColumns(t *testing.T, ix *agentIndex, sv *sieve) {
	t.Helper()
	for user, positions := range ix.byUser {
		c := sv.scopes[user]
		if c == nil || len(c.pos) != len(positions) {
			t.Fatalf("user %q: sieve scope %v, want %d positions", user, c, len(positions))
		}
		m := len(c.pos)
		for j, p := range c.pos {
			if int(p) != positions[j] {
				t.Fatalf("user %q: member %d is position %d, want %d", user, j, p, positions[j])
			}
			for d, f := range ix.vectors[p] {
				code, scale := c.code[d*m+j], c.scale[j]
				if diff := float32(code)*scale - f; diff > scale/2*1.001 || -diff > scale/2*1.001 {
					t.Fatalf("user %q, position %d: code %d × %g is %g off %g", user, p, code, scale, diff, f)
				}
			}
		}
	}
}

// lateIndex returns a copy of ix whose vectors nearest to qv were
// pending when it was indexed and were filled in since (Backfill).
func lateIndex(t *testing.T, ix *agentIndex, qv []float32) *agentIndex {
	t.Helper()
	late := *ix
	late.vectors = slices.Clone(ix.vectors)
	var gone []scored
	for _, user := range []string{"", "user-01"} {
		gone = append(gone, ix.nearest(qv, 5, user)...)
	}
	for _, g := range gone {
		late.vectors[g.pos] = nil
	}
	late.index(vectorPlan{threshold: 0}, nil, nil)
	if late.ann.sieve == nil {
		t.Fatal("no sieve")
	}
	for _, g := range gone {
		late.vectors[g.pos] = ix.vectors[g.pos]
		late.ann.backfilled(ix.chunks[g.pos].User, g.pos, ix.vectors[g.pos])
	}
	return &late
}
