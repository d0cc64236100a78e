package memstore

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/quirehq/quire/memory"
)

// TestTailsMatchRebuild: under appends to logs (with and without a final
// line break, a blank line before the entry or not), now and then an
// edit, a truncation, a new log or one deleted, the text index that
// runs change with the kept Docs of logs' last chunks (tails) answers
// as one made from scratch, to the bit, no change is refused (which
// would make it anew and hide a wrong Doc), and the kept Docs serve
// most appends, compactions (which renumber them) or not.
func TestTailsMatchRebuild(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(2) {
		t.Run(fmt.Sprint("seed-", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 38))
			var logged bytes.Buffer
			s, err := New(Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
			if err != nil {
				t.Fatal(err)
			}
			keys := []docKey{{"", "memory/2026-03-01.md"}, {"ann", "memory/2026-03-01.md"}, {"ann", "memory/2026-03-02.md"}, {"", "MEMORY.md"}, {"bob", "memory/2026-03-02.md"}}
			logs := map[docKey]string{}
			appends, served := 0, 0
			for step := range 500 { // past a compaction or two
				k := keys[r.IntN(len(keys))]
				text, ok := logs[k]
				switch n := r.IntN(20); {
				case n == 0 && ok:
					delete(logs, k)
				case n == 1 && len(text) > 0:
					logs[k] = text[:r.IntN(len(text))]
				case n == 2 && len(text) > 0:
					i := r.IntN(len(text))
					logs[k] = text[:i] + "edited " + text[i:]
				default:
					entry := fmt.Sprintf("## %02d:%02d\nEntry %d: %s\n", step/60, step%60, step, tailWords(r, 3+r.IntN(40)))
					if r.IntN(4) == 0 {
						entry = strings.TrimSuffix(entry, "\n")
					}
					if r.IntN(3) == 0 {
						entry = "\n" + entry
					}
					logs[k] = text + entry
					if ok && s.servesTail("a", k) {
						served++
					}
					appends++
				}
				docs := tailDocs(logs)
				if _, err := s.Index(ctx, "a", fmt.Sprint("c", step), docs); err != nil {
					t.Fatal(err)
				}
				fresh, err := New(Options{})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := fresh.Index(ctx, "a", "rebuilt", docs); err != nil {
					t.Fatal(err)
				}
				sameText(t, s.agents["a"], fresh.agents["a"], step)
			}
			if strings.Contains(logged.String(), "refused") {
				t.Errorf("a text index change was refused:\n%s", logged.String())
			}
			if served < appends/2 {
				t.Errorf("the kept Docs served %d of %d appends", served, appends)
			}
		})
	}
}

// servesTail reports whether agent's tails hold the Doc of document k's
// last chunk as indexed.
func (s *Store) servesTail(agent string, k docKey) bool {
	ix, tl := s.agents[agent], s.tails[agent]
	if ix == nil || tl == nil || tl.text != ix.text {
		return false
	}
	lo, hi := ix.docChunks(k)
	e, ok := tl.docs[k]
	return hi > lo && ok && e.chunk == ix.chunks[hi-1]
}

// sameText fails unless a's and b's chunks and text indexes are alike:
// the same document frequencies and scores, to the bit.
func sameText(t *testing.T, a, b *agentIndex, step int) {
	t.Helper()
	if !slices.Equal(a.chunks, b.chunks) {
		t.Fatalf("step %d: %d chunks, rebuilt %d, or not the same", step, len(a.chunks), len(b.chunks))
	}
	var an memory.Analyzer
	for _, w := range append(slices.Clone(tailVocabulary), "entry", "edited", "2026", "march", "sunday") {
		terms := an.Terms(w)
		if len(terms) == 0 {
			continue
		}
		if da, db := a.text.DF(terms[0]), b.text.DF(terms[0]); da != db {
			t.Fatalf("step %d: DF(%q) %d, rebuilt %d", step, terms[0], da, db)
		}
		for place := range a.chunks {
			if sa, sb := a.text.Score(terms, place), b.text.Score(terms, place); sa != sb {
				t.Fatalf("step %d: Score(%q, %d) %v, rebuilt %v", step, terms, place, sa, sb)
			}
		}
	}
}

var tailVocabulary = strings.Fields("invoice garden tomato printer wifi password lake hiking deploy release customer ledger order warehouse oat milk coffee meeting budget fridge")

func tailWords(r *rand.Rand, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = tailVocabulary[r.IntN(len(tailVocabulary))]
		switch r.IntN(12) {
		case 0:
			w[i] += ".\n"
		case 1:
			w[i] = fmt.Sprintf("rare%d", r.IntN(500))
		}
	}
	return strings.Join(w, " ")
}

func tailDocs(logs map[docKey]string) []memory.Document {
	var docs []memory.Document
	for k, text := range logs {
		docs = append(docs, memory.NewDocument(k.path, k.user, text))
	}
	slices.SortFunc(docs, memory.CompareDocuments)
	return docs
}
