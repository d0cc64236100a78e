package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

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

// testPeriodQuestion: a query naming a day or period relative to its
// reference time finds the daily logs around that date, within a window,
// even when another day's log shares more of its words.
func testPeriodQuestion(t *testing.T, open Open) {
	s := open(t, memory.None{})
	index(t, s, "a", "c1",
		doc("", "memory/2023-05-05.md", "## 10:00\nMel: pottery class, then the lake."),
		doc("", "memory/2023-05-12.md", "## 10:00\nMel: we went to the lake with the kids, the lake was cold."),
		doc("", "memory/2023-04-20.md", "## 10:00\nMel: the lake again."),
		doc("", "MEMORY.md", "Mel likes the lake."),
	)
	now := time.Date(2023, 5, 13, 9, 0, 0, 0, time.UTC) // a Saturday
	for _, tt := range []struct{ q, want string }{
		{"what did Mel do at the lake last weekend?", "memory/2023-05-05.md"}, // 6-7 May, the log of Friday the 5th in the window
		{"what did Mel do at the lake yesterday?", "memory/2023-05-12.md"},
		{"the lake in April 2023", "memory/2023-04-20.md"},
	} {
		hits := search(t, s, "a", memory.Query{Text: tt.q, Now: now})
		if len(hits) == 0 || hits[0].Path != tt.want {
			t.Errorf("%q (now %s) found %s; want %s first", tt.q, now.Format(time.DateOnly), describe(hits), tt.want)
		}
	}
	hits := search(t, s, "a", memory.Query{Text: "what did Mel do at the lake last weekend?", Now: now.AddDate(1, 0, 0)})
	if len(hits) > 0 && hits[0].Path == "memory/2023-05-05.md" {
		t.Errorf("a year later, last weekend still found %s first", describe(hits))
	}
}
