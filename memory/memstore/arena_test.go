package memstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/storetest"
)

// An agent's vectors live in its approximate index's arena while it has
// one: a changed agent writes only its fresh vectors to the same arena
// (and makes only their codes for its sieve, copying the others),
// an agent shrunk to an exact scan takes its vectors back onto the heap,
// and searches return exact cosines either way.
func TestArenaAcrossVersions(t *testing.T) {
	corpus := storetest.NewCorpus(1500, 5)
	changed := slices.Clone(corpus.Docs)
	changed[0] = memory.NewDocument(changed[0].Path, changed[0].User, changed[0].Text+"\n\nOne more paragraph.")
	freshChunks := 0 // the changed document's chunks that were not there
	for _, c := range changed[0].Chunks() {
		if !slices.Contains(corpus.Docs[0].Chunks(), c) {
			freshChunks++
		}
	}
	s, err := New(Options{Embedder: memory.Builtin{}, ExactVectors: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var prev *vectorArena
	prevN := 0
	for _, step := range []struct {
		name        string
		docs        []memory.Document
		approximate bool
		sameArena   bool
		written     int // vectors written to the arena; -1 all
	}{
		{"first", corpus.Docs, true, false, -1},
		{"one document changed", changed, true, true, freshChunks},
		{"shrunk to an exact scan", changed[:3], false, false, 0},
		{"grown again", corpus.Docs, true, false, -1},
	} {
		t.Run(step.name, func(t *testing.T) {
			if _, err := s.Index(context.Background(), "a", step.name, step.docs); err != nil {
				t.Fatal(err)
			}
			ix := s.agents["a"]
			if got := ix.ann != nil; got != step.approximate {
				t.Fatalf("approximate index: %v, want %v", got, step.approximate)
			}
			checkArena(t, ix, prev)
			if step.approximate {
				a := ix.ann.arena
				if same := a == prev; same != step.sameArena {
					t.Errorf("same arena as before: %v, want %v", same, step.sameArena)
				}
				want := step.written
				if want < 0 {
					want = len(ix.vectors)
				}
				if written := a.n - prevN*btoi(a == prev); written != want {
					t.Errorf("%d vectors written to the arena, want %d", written, want)
				}
				sv := ix.ann.sieve
				if sv == nil {
					t.Fatal("the builtin embedder's index has no sieve")
				}
				checkColumns(t, ix, sv)
				if sv.quantized != want {
					t.Errorf("%d codes made for the sieve, want %d (the others copied)", sv.quantized, want)
				}
				wantMade := len(sv.scopes)
				if step.sameArena {
					wantMade = 1 // the changed document's scope
				}
				if sv.made != wantMade {
					t.Errorf("columns of %d scopes made, want %d (the others kept)", sv.made, wantMade)
				}
				prev, prevN = a, a.n
			} else {
				prev, prevN = nil, 0
			}
			checkExactScores(t, s, ix, corpus)
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkArena checks that ix's vectors are its arena's when it has an
// approximate index, with their codes, and not prev's otherwise.
func checkArena(t *testing.T, ix *agentIndex, prev *vectorArena) {
	t.Helper()
	for i, v := range ix.vectors {
		if ix.ann == nil {
			if prev == nil {
				break
			}
			if _, in := prev.slotOf(v); in {
				t.Fatalf("vector %d is still the old arena's", i)
			}
			continue
		}
		slot, in := ix.ann.arena.slotOf(v)
		if !in || int32(slot) != ix.ann.slot[i] {
			t.Fatalf("vector %d: slot %d (in arena: %v), want %d", i, slot, in, ix.ann.slot[i])
		}
		seg, k, dims := ix.ann.arena.segs[slot/arenaSlots], slot%arenaSlots, ix.ann.arena.dims
		if !ix.ann.arena.coded {
			continue
		}
		for d, c := range seg.codes[k*dims : (k+1)*dims] {
			if diff := float32(c)*seg.scales[k] - v[d]; diff > seg.scales[k]/2*1.001 || -diff > seg.scales[k]/2*1.001 {
				t.Fatalf("vector %d: code %d × %g is %g off %g", i, c, seg.scales[k], diff, v[d])
			}
		}
	}
}

// checkExactScores checks that the vector side finds the exact scan's
// nearest chunks with their exact cosines.
func checkExactScores(t *testing.T, s *Store, ix *agentIndex, corpus *storetest.Corpus) {
	t.Helper()
	for i, q := range corpus.Queries[:20] {
		user := corpus.Users[i%len(corpus.Users)]
		vs, err := s.opts.Embedder.Embed(context.Background(), []string{q})
		if err != nil {
			t.Fatal(err)
		}
		qv := unit(vs[0])
		exact := (&agentIndex{chunks: ix.chunks, vectors: ix.vectors, byUser: ix.byUser}).nearest(qv, 24, user)
		got := ix.nearest(qv, 24, user)
		sortScored(exact)
		sortScored(got)
		if !slices.Equal(got, exact) {
			t.Fatalf("query %q: nearest\n%v\nwant\n%v", q, got, exact)
		}
	}
}

func sortScored(s []scored) {
	slices.SortFunc(s, func(a, b scored) int {
		if worse(a, b) {
			return 1
		}
		if worse(b, a) {
			return -1
		}
		return 0
	})
}

// Searches of an agent's index go on while the next versions of it add
// to the arena they read, past its first segment (run with -race), until
// it is mostly garbage and a version starts a new one.
func TestArenaSearchWhileIndexing(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes 1,500 chunks a dozen times")
	}
	corpus := storetest.NewCorpus(1500, 6)
	s, err := New(Options{Embedder: memory.Builtin{}, ExactVectors: 1000})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Index(ctx, "a", "c0", corpus.Docs); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	searched := make(chan error, 1)
	go func() {
		var err error
		for i := 0; err == nil; i++ {
			select {
			case <-done:
				searched <- nil
				return
			default:
			}
			_, err = s.Search(ctx, "a", memory.Query{Text: corpus.Queries[i%len(corpus.Queries)], User: corpus.Users[i%len(corpus.Users)]})
		}
		searched <- err
	}()
	docs := slices.Clone(corpus.Docs)
	first := s.agents["a"].ann.arena
	for v := 1; s.agents["a"].ann.arena == first; v++ {
		if v > 20 {
			t.Fatalf("the arena was not replaced after %d versions: it holds %d vectors in %d segments", v, first.n, len(first.segs))
		}
		for i, d := range docs { // every chunk (paragraph) fresh
			docs[i] = memory.NewDocument(d.Path, d.User, strings.ReplaceAll(corpus.Docs[i].Text, "\n\n", fmt.Sprintf(" (version %d)\n\n", v)))
		}
		if _, err := s.Index(ctx, "a", fmt.Sprint(v), docs); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	if err := <-searched; err != nil {
		t.Fatal(err)
	}
	// The old arena was shared past its first segment, then left for a
	// new one holding only the current vectors once mostly garbage.
	if len(first.segs) < 2 {
		t.Errorf("the first arena was replaced in its first segment")
	}
	if a, ix := s.agents["a"].ann.arena, s.agents["a"]; a.n != len(ix.vectors) {
		t.Errorf("the new arena holds %d vectors, want the index's %d", a.n, len(ix.vectors))
	}
}
