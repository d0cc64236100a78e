package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/quirehq/quire/memory"
)

// testAppendsMatchRebuild: after any sequence of appends to daily logs,
// edits and truncations (each indexed as a commit), the index holds the
// same chunks and answers searches as a store that indexed only the
// last snapshot, from scratch.
func testAppendsMatchRebuild(t *testing.T, open Open) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed-", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 29))
			live := open(t, memory.Builtin{})
			logs := map[[2]string]string{} // user, path → text
			keys := [][2]string{{"", "memory/2026-03-01.md"}, {"ann", "memory/2026-03-01.md"}, {"", "MEMORY.md"}, {"bob", "memory/2026-03-02.md"}}
			for step := range 40 {
				k := keys[r.IntN(len(keys))]
				logs[k] = mutate(r, logs[k], step)
				index(t, live, "a", fmt.Sprint("c", step), snapshot(logs)...)
			}
			fresh := open(t, memory.Builtin{})
			index(t, fresh, "a", "rebuilt", snapshot(logs)...)
			sameIndex(t, live, fresh, "a")
		})
	}
}

// mutate appends an entry to text, or now and then edits or truncates it.
func mutate(r *rand.Rand, text string, step int) string {
	entry := fmt.Sprintf("## %02d:%02d\nEntry %d: %s\n", step/60, step%60, step, words(r, 3+r.IntN(60)))
	switch n := r.IntN(10); {
	case n == 0 && len(text) > 0: // truncate
		return text[:r.IntN(len(text))]
	case n == 1 && len(text) > 0: // edit in the middle
		i := r.IntN(len(text))
		return text[:i] + "edited " + text[i:]
	case n == 2: // an entry without its final newline
		return text + strings.TrimSuffix(entry, "\n")
	default:
		if r.IntN(3) == 0 {
			entry = "\n" + entry
		}
		return text + entry
	}
}

var vocabulary = strings.Fields("invoice garden tomato printer wifi password lake hiking deploy release customer ledger order warehouse oat milk coffee meeting budget fridge")

func words(r *rand.Rand, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = vocabulary[r.IntN(len(vocabulary))]
		if r.IntN(12) == 0 {
			w[i] += ".\n"
		}
	}
	return strings.Join(w, " ")
}

func snapshot(logs map[[2]string]string) []memory.Document {
	var docs []memory.Document
	for k, text := range logs {
		docs = append(docs, memory.NewDocument(k[1], k[0], text))
	}
	slices.SortFunc(docs, func(a, b memory.Document) int {
		return strings.Compare(a.User+"\x00"+a.Path, b.User+"\x00"+b.Path)
	})
	return docs
}

// sameIndex fails unless a and b hold the same chunks of agent and rank
// alike.
func sameIndex(t *testing.T, a, b memory.Store, agent string) {
	t.Helper()
	ctx := context.Background()
	ca, err := a.Chunks(ctx, agent)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := b.Chunks(ctx, agent)
	if err != nil {
		t.Fatal(err)
	}
	if len(ca) != len(cb) {
		t.Fatalf("%d chunks after the appends, %d rebuilt", len(ca), len(cb))
	}
	for i := range ca {
		if ca[i] != cb[i] {
			t.Fatalf("chunk %d after the appends %+v, rebuilt %+v", i, ca[i], cb[i])
		}
	}
	for _, q := range []memory.Query{{Text: "invoice garden"}, {Text: "wifi password", User: "ann"}, {Text: "edited entry", User: "bob"}, {Text: "oat milk coffee"}} {
		ha, hb := search(t, a, agent, q), search(t, b, agent, q)
		if describe(ha) != describe(hb) {
			t.Errorf("search %q (user %q): after the appends %s; rebuilt %s", q.Text, q.User, describe(ha), describe(hb))
		}
	}
}
