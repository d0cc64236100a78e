package storetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/quirehq/quire/memory"
)

// testContext: a hit asked for with context carries the chunks next to it
// in its document, marked before and after, and nothing from other
// documents; without the ask it carries none, and the ranking is the same.
func testContext(t *testing.T, open Open) {
	s := open(t, memory.None{})
	var b strings.Builder
	b.WriteString("# 2023-05-08 (Monday)\n")
	for i := range 12 {
		fmt.Fprintf(&b, "\n## 10:%02d\nTurn %d: %s\n", i, i, strings.Repeat("filler words about the weather ", 8))
	}
	log := b.String()
	log = strings.Replace(log, "Turn 6:", "Turn 6: the zeppelin tickets arrived.", 1)
	index(t, s, "a", "c1", doc("", "memory/2023-05-08.md", log), doc("", "MEMORY.md", "Unrelated note."))
	plain := search(t, s, "a", memory.Query{Text: "zeppelin", Limit: 1})
	hits := search(t, s, "a", memory.Query{Text: "zeppelin", Limit: 1, Context: 1})
	if len(plain) != 1 || len(hits) != 1 || plain[0].StartLine != hits[0].StartLine || plain[0].Context != nil {
		t.Fatalf("hits without context %s, with %s; want the same one hit, context only when asked", describe(plain), describe(hits))
	}
	h := hits[0]
	if !strings.Contains(h.Text, "zeppelin") {
		t.Fatalf("hit text %q lacks the match", h.Text)
	}
	if len(h.Context) != 2 || h.Context[0].Side != memory.Before || h.Context[1].Side != memory.After {
		t.Fatalf("context %+v; want one chunk before and one after", h.Context)
	}
	if h.Context[0].EndLine >= h.StartLine || h.Context[1].StartLine <= h.EndLine {
		t.Errorf("context lines %d-%d and %d-%d do not surround the hit's %d-%d",
			h.Context[0].StartLine, h.Context[0].EndLine, h.Context[1].StartLine, h.Context[1].EndLine, h.StartLine, h.EndLine)
	}
	for _, c := range h.Context {
		if strings.Contains(c.Text, "zeppelin") || strings.Contains(c.Text, "Unrelated") {
			t.Errorf("context %q holds the hit or another document", c.Text)
		}
	}
	wide := search(t, s, "a", memory.Query{Text: "zeppelin", Limit: 1, Context: 100})
	if n := len(wide[0].Context); n > 2*memory.MaxContext || n <= 2 {
		t.Errorf("context of %d chunks; want 3 to %d", n, 2*memory.MaxContext)
	}
}
