package draft_test

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/quirehq/quire/llm"
	"github.com/quirehq/quire/llm/draft"
	"github.com/quirehq/quire/prompt"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// answer is a Model that answers with a fixed text and keeps what it was
// asked.
type answer struct {
	text string
	got  []llm.Message
}

func (a *answer) Complete(_ context.Context, msgs []llm.Message) (string, error) {
	a.got = msgs
	return a.text, nil
}

func base() fstest.MapFS {
	return fstest.MapFS{
		"agents/concierge/agent.yaml":           {Data: []byte("type: predefined\n")},
		"agents/concierge/SOUL.md":              {Data: []byte("# Soul\n\nKind.\n")},
		"agents/concierge/MEMORY.md":            {Data: []byte("# Memory\n\n- The guest in 12 likes tea.\n")},
		"agents/concierge/memory/2026-11-20.md": {Data: []byte("## 09:00\n\nToo old to read.\n")},
		"agents/concierge/memory/2026-11-24.md": {Data: []byte("## 10:00\n\nThe guest in 12 switched to coffee.\n")},
		"agents/concierge/memory/2026-11-26.md": {Data: []byte("## 08:15\n\nLate checkout agreed for room 4.\n")},
	}
}

const goodSummon = `Here you go!
<file path="SOUL.md">
# Soul

You review Rust with a dry wit.
</file>
<file path="IDENTITY.md">
- **Name:** Ferris
</file>
<file path="AGENTS.md">
` + "```markdown\n# Operating\n\nRead MEMORY.md first.\n```" + `
</file>
<file path="agent.yaml">
identity: You are Ferris, a sarcastic Rust reviewer.
</file>`

func TestSummon(t *testing.T) {
	m := &answer{text: goodSummon}
	d, err := draft.Summon(context.Background(), m, base(), draft.SummonRequest{Name: "ferris", Description: "a sarcastic Rust reviewer"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"agents/ferris/AGENTS.md", "agents/ferris/IDENTITY.md", "agents/ferris/SOUL.md", "agents/ferris/agent.yaml"}
	if got := d.Paths(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("paths = %v, want %v", got, want)
	}
	if got := string(d.Files["agents/ferris/AGENTS.md"]); got != "# Operating\n\nRead MEMORY.md first.\n" {
		t.Errorf("AGENTS.md = %q: the fence should be gone", got)
	}
	golden(t, "summon-messages.golden", m.got)
}

func TestSummonRefuses(t *testing.T) {
	tests := []struct {
		name, answer, agent string
		want                []string
	}{
		{"no blocks", "Sure! Your agent is great.", "ferris", []string{"no <file", "Sure! Your agent"}},
		{"a required file missing", `<file path="SOUL.md">x</file>`, "ferris", []string{"no IDENTITY.md", "no AGENTS.md"}},
		{"a file not asked for", goodSummon + `<file path="../../etc/passwd">x</file>`, "ferris", []string{`"../../etc/passwd"`}},
		{"an invalid agent.yaml", strings.Replace(goodSummon, "identity: You are", "budget: {per_file: -1}\nidentity: You are", 1), "ferris",
			[]string{"agents/ferris/agent.yaml:1", "budget.per_file must be positive"}},
		{"a name the model chose", strings.Replace(goodSummon, "identity:", "name: rusty\nidentity:", 1), "ferris", []string{`name is "rusty"`}},
		{"an agent that exists", goodSummon, "concierge", []string{"agents/concierge", "exists"}},
		{"a bad name", goodSummon, "Ferris/../x", []string{"lower-case"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := draft.Summon(context.Background(), &answer{text: tt.answer}, base(), draft.SummonRequest{Name: tt.agent, Description: "x"})
			if err == nil {
				t.Fatalf("Summon = %v; want an error", d.Paths())
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestAgentDir(t *testing.T) {
	root := fstest.MapFS{"SOUL.md": {Data: []byte("x\n")}}
	if _, err := draft.AgentDir(root, "new", ""); err == nil || !strings.Contains(err.Error(), "root is an agent") {
		t.Fatalf("AgentDir on a root agent = %v", err)
	}
	if d, err := draft.AgentDir(fstest.MapFS{}, "new", ""); err != nil || d != "new" {
		t.Fatalf("AgentDir on an empty tree = %q, %v", d, err)
	}
	if d, err := draft.AgentDir(base(), "new", "team"); err != nil || d != "team/new" {
		t.Fatalf("AgentDir with a dir = %q, %v", d, err)
	}
	if _, err := draft.AgentDir(base(), "concierge", ""); !errors.Is(err, draft.ErrExists) {
		t.Fatalf("AgentDir of an existing agent = %v", err)
	}
}

func concierge(t *testing.T) *prompt.Agent {
	ws, err := prompt.Open(base(), prompt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := ws.Agent("concierge")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestConsolidate(t *testing.T) {
	m := &answer{text: "<file path=\"MEMORY.md\">\n# Memory\n\n- The guest in 12 drinks coffee now.\n- Room 4 has a late checkout.\n</file>"}
	today := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	d, err := draft.Consolidate(context.Background(), m, base(), draft.ConsolidateRequest{Agent: concierge(t), Days: 3, Today: today})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Paths(); len(got) != 1 || got[0] != "agents/concierge/MEMORY.md" {
		t.Fatalf("paths = %v", got)
	}
	golden(t, "consolidate-messages.golden", m.got)
	if strings.Contains(m.got[1].Content, "Too old") {
		t.Error("a log older than the days was sent")
	}

	_, err = draft.Consolidate(context.Background(), m, base(), draft.ConsolidateRequest{Agent: concierge(t), Days: 1, Today: today.AddDate(0, 0, 10)})
	if !errors.Is(err, draft.ErrNothingToConsolidate) {
		t.Fatalf("no logs: err = %v", err)
	}
	same := &answer{text: "<file path=\"MEMORY.md\">\n# Memory\n\n- The guest in 12 likes tea.\n</file>"}
	_, err = draft.Consolidate(context.Background(), same, base(), draft.ConsolidateRequest{Agent: concierge(t), Today: today})
	if !errors.Is(err, draft.ErrNothingToConsolidate) {
		t.Fatalf("no change: err = %v", err)
	}
	huge := &answer{text: "<file path=\"MEMORY.md\">\n" + strings.Repeat("x", 1<<20+10) + "\n</file>"}
	_, err = draft.Consolidate(context.Background(), huge, base(), draft.ConsolidateRequest{Agent: concierge(t), Today: today})
	var inv *draft.InvalidError
	if !errors.As(err, &inv) {
		t.Fatalf("a MEMORY.md over 1 MiB: err = %v; want an *InvalidError", err)
	}
}

func golden(t *testing.T, name string, msgs []llm.Message) {
	t.Helper()
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString("=== " + m.Role + "\n" + m.Content + "\n")
	}
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if b.String() != string(want) {
		t.Errorf("messages differ from %s (go test -update rewrites it):\n%s", p, b.String())
	}
}
