package storetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/quirehq/quire/memory"
)

// Parity indexes the same realistic corpus (NewCorpus: 3,000 chunks of
// agent-level and per-user notes, with daily logs among them) into a store
// of each kind, with the builtin embedder and without one, and checks that
// both return the same top 6 (ties aside) for at least 99 % of the
// corpus's queries, asked as users, from the first search after indexing.
func Parity(t *testing.T, reference, open Open) {
	corpus := NewCorpus(3000, 7)
	docs := append([]memory.Document(nil), corpus.Docs...)
	// Daily logs: their dates are indexed too.
	for i := 0; i < 30; i++ {
		day := fmt.Sprintf("memory/2024-%02d-%02d.md", 1+i%12, 1+i)
		docs = append(docs, memory.NewDocument(day, "", fmt.Sprintf("# log\n\n## 09:%02d\n%s", i, corpus.Queries[i])))
	}
	for _, e := range []memory.Embedder{memory.None{}, memory.Builtin{}} {
		t.Run(e.Model(), func(t *testing.T) {
			a, b := reference(t, e), open(t, e)
			index(t, a, "p", "c1", docs...)
			index(t, b, "p", "c1", docs...)
			queries := corpus.Queries[:300]
			queries = append(queries, "what happened in March 2024", "notes from a Monday in January")
			same := 0
			var diffs []string
			for i, q := range queries {
				query := memory.Query{Text: q, User: corpus.Users[i%len(corpus.Users)]}
				ha, hb := search(t, a, "p", query), search(t, b, "p", query)
				if SameTop(ha, hb) {
					same++
				} else if len(diffs) < 3 {
					diffs = append(diffs, fmt.Sprintf("%q:\n  reference %s\n  store     %s", q, Places(ha), Places(hb)))
				}
			}
			if share := float64(same) / float64(len(queries)); share < 0.99 {
				t.Errorf("same top 6 for %d of %d queries (%.3f), want >= 0.99; e.g.\n%s", same, len(queries), share, strings.Join(diffs, "\n"))
			}
		})
	}
}

// SameTop reports whether two searches returned the same hits in the
// same order, where hits of equal score may trade places and the last
// places may hold different hits of equal score. Scores are equal to
// within 1e-6: the stores compute cosines in float32 differently.
func SameTop(a, b []memory.Hit) bool {
	if len(a) != len(b) {
		return false
	}
	const eps = 1e-6
	near := func(x, y float64) bool { return x-y <= eps && y-x <= eps }
	key := func(h memory.Hit) string { return fmt.Sprintf("%s\x00%d\x00%s", h.Path, h.StartLine, h.User) }
	for i := range a {
		if key(a[i]) == key(b[i]) {
			continue
		}
		if !near(a[i].Score, b[i].Score) {
			return false
		}
		// A tie: the hit must be among b's hits of the same score, unless
		// the tie runs past the last place.
		found := false
		for _, h := range b {
			if key(h) == key(a[i]) && near(h.Score, a[i].Score) {
				found = true
			}
		}
		if !found && !near(a[len(a)-1].Score, a[i].Score) {
			return false
		}
	}
	return true
}

// Places renders hits as path:line(score) for messages.
func Places(hs []memory.Hit) string {
	var parts []string
	for _, h := range hs {
		parts = append(parts, fmt.Sprintf("%s%s:%d(%.4f)", h.User, h.Path, h.StartLine, h.Score))
	}
	return strings.Join(parts, " ")
}
