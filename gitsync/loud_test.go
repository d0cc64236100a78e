package gitsync

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/quirehq/quire/prompt/workspace"
)

const noAgentMessage = "no agent here: looked for agent.yaml, AGENTS.md or SOUL.md at the root and for agent.yaml in its subdirectories (create one with 'quire init')"

// A tree with no agent is one error of Check, the answer `quire check`
// and the push validator share; a tree with one has no such error.
func TestCheckNoAgent(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string // path|severity|code|message of the no-agent problem
	}{
		{"notes only", map[string]string{"README.md": "x\n", "MEMORY.md": "x\n"}, []string{"|error|no-agent|" + noAgentMessage}},
		{"a persona below the root", map[string]string{"bots/tutor/SOUL.md": "x\n"},
			[]string{"|error|no-agent|no agent here: looked for agent.yaml, AGENTS.md or SOUL.md at the root and for agent.yaml in its subdirectories; bots/tutor has SOUL.md but no agent.yaml: add one there to make it an agent"}},
		{"AGENTS.md at the root", map[string]string{"AGENTS.md": "# A\n"}, nil},
		{"an agent below", map[string]string{"README.md": "x\n", "bots/tutor/agent.yaml": "name: tutor\n"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for p, c := range tc.files {
				fsys[p] = &fstest.MapFile{Data: []byte(c)}
			}
			var got []string
			for _, p := range Check(context.Background(), fsys, CheckOptions{RootName: "ws"}) {
				if p.Code == CodeNoAgent || p.Code == workspace.CodeUnreadable {
					got = append(got, p.Path+"|"+string(p.Severity)+"|"+p.Code+"|"+p.Message)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("problems\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// The first push to a new repository (--allow-create) of a tree with no
// agent is refused, naming what is missing; nothing is stored.
func TestPushWithNoAgentIsRefused(t *testing.T) {
	_, url, dir := testHost(t, HostOptions{Validator: WorkspaceChecks(CheckOptions{})})
	work := newWorkRepo(t, map[string]string{"README.md": "notes\n"})
	out, err := gitTry(work, "push", url+"/ws.git", "main")
	if err == nil {
		t.Fatalf("a push with no agent was accepted:\n%s", out)
	}
	for _, want := range []string{"remote: error: main refused:", "remote: error:   " + noAgentMessage, "[remote rejected] main -> main (no agent here: "} {
		if !strings.Contains(out, want) {
			t.Errorf("push output lacks %q:\n%s", want, out)
		}
	}
	if _, err := gitTry(filepath.Join(dir, "ws.git"), "rev-parse", "--verify", "-q", "refs/heads/main"); err == nil {
		t.Error("the refused main exists on the server")
	}
	// With an agent the same repository takes it.
	writeFiles(t, work, map[string]string{"AGENTS.md": "# Rules\n"})
	git(t, work, "add", "-A")
	git(t, work, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "agent")
	if out, err := gitTry(work, "push", url+"/ws.git", "main"); err != nil {
		t.Fatalf("a push with AGENTS.md was refused: %v\n%s", err, out)
	}
}
