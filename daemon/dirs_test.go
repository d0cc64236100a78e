package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/internal/testenv"
)

// TestSeveralDirs: every working tree given is served and watched, each
// agent's writes go to its own tree; two trees that define one agent
// stop the start, naming both, and so does a tree with no agent.
func TestSeveralDirs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := t.TempDir(), t.TempDir()
	testenv.WriteFiles(t, a, map[string]string{"agent.yaml": "name: ann\n", "SOUL.md": "# Soul\n\nMARKER-ANN\n"})
	testenv.WriteFiles(t, b, map[string]string{"agent.yaml": "name: ben\n", "SOUL.md": "# Soul\n\nMARKER-BEN\n"})
	td := startDaemon(t, daemon.Options{Dirs: []string{a, b}})
	for agent, marker := range map[string]string{"ann": "MARKER-ANN", "ben": "MARKER-BEN"} {
		p, err := td.c.Prompt(ctx, agent, api.PromptRequest{})
		if err != nil || !strings.Contains(p.Prompt, marker) {
			t.Fatalf("prompt of %s: %v %q", agent, err, p.Prompt)
		}
	}
	testenv.WriteFiles(t, b, map[string]string{"SOUL.md": "# Soul\n\nMARKER-BEN-TWO\n"})
	waitFor(t, "the second tree's saved SOUL.md to be served", func() bool {
		p, err := td.c.Prompt(ctx, "ben", api.PromptRequest{})
		return err == nil && strings.Contains(p.Prompt, "MARKER-BEN-TWO")
	})
	w, err := td.c.MemoryAppend(ctx, "ben", api.AppendRequest{Text: "Ben's entry."})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(b, filepath.FromSlash(w.Path))); err != nil || !strings.Contains(string(got), "Ben's entry.") {
		t.Fatalf("ben's daily log in his tree: %q %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(a, filepath.FromSlash(w.Path))); !os.IsNotExist(err) {
		t.Fatalf("ben's write reached ann's tree: %v", err)
	}

	c := t.TempDir()
	testenv.WriteFiles(t, c, map[string]string{"agent.yaml": "name: ann\n"})
	tmp := shortTempDir(t)
	_, err = daemon.New(ctx, daemon.Options{Dirs: []string{a, c}, Socket: filepath.Join(tmp, "q.sock"), CacheDir: filepath.Join(tmp, "cache")})
	if err == nil || !strings.Contains(err.Error(), `agent "ann" is already defined by dir:`+a) || !strings.Contains(err.Error(), "dir:"+c) {
		t.Fatalf("two trees defining ann: %v, want a refusal naming both", err)
	}
	empty := t.TempDir()
	_, err = daemon.New(ctx, daemon.Options{Dirs: []string{a, empty}, Socket: filepath.Join(tmp, "q.sock"), CacheDir: filepath.Join(tmp, "cache")})
	if err == nil || !strings.HasPrefix(err.Error(), "--dir "+empty+": no agent here") {
		t.Fatalf("a second tree with no agent: %v, want a refusal naming it", err)
	}
}
