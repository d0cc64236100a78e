package lsp

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"
)

// startTestWatcher watches root and returns the watcher and a channel that
// receives a value per reported change; the initial report is consumed.
func startTestWatcher(t *testing.T, root string) (*watcher, chan struct{}) {
	t.Helper()
	changes := make(chan struct{}, 100)
	w := startWatcher(root, testLogger(), func() { changes <- struct{}{} })
	t.Cleanup(w.close)
	select {
	case <-w.ready:
	case <-time.After(10 * time.Second):
		t.Fatal("the watches were not in place")
	}
	waitChange(t, changes, "the report once the watches are in place")
	return w, changes
}

func waitChange(t *testing.T, changes chan struct{}, what string) {
	t.Helper()
	select {
	case <-changes:
	case <-time.After(5 * time.Second):
		t.Fatalf("no change reported: %s", what)
	}
}

func noChange(t *testing.T, changes chan struct{}, what string) {
	t.Helper()
	select {
	case <-changes:
		t.Errorf("a change was reported: %s", what)
	case <-time.After(300 * time.Millisecond):
	}
}

func mkdirs(t *testing.T, root string, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(d)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// Only directories that can hold workspace files are watched: not .git,
// not node_modules, not what .gitignore or .git/info/exclude ignore, not
// hidden directories but .agents.
func TestWatchOnlyWhatAWorkspaceCanHold(t *testing.T) {
	root := writeFiles(t, map[string]string{
		".gitignore":                 "/dist/\nbuild\n*.cache\n",
		".git/info/exclude":          "scratch/\n",
		"agents/a/agent.yaml":        "name: a\n",
		"agents/a/SOUL.md":           "# Soul\n",
		"packages/p/.gitignore":      "gen/\n",
		"packages/p/gen/x.md":        "generated\n",
		"node_modules/left/index.js": "x",
	})
	mkdirs(t, root,
		".git/objects/aa", ".vscode", "node_modules/left/node_modules/pad/lib", "agents/a/node_modules/x",
		"dist/assets", "build/out", "src/build", "src/app/components", "x.cache", "scratch/notes",
		"agents/a/memory/2026", "agents/a/skills/pdf", "agents/a/.agents/skills/tool", "agents/a/users/alice/memory",
		"packages/p/src", "packages/q/gen",
	)
	w, _ := startTestWatcher(t, root)
	want := []string{
		".", "agents", "agents/a", "agents/a/.agents", "agents/a/.agents/skills", "agents/a/.agents/skills/tool",
		"agents/a/memory", "agents/a/memory/2026", "agents/a/skills", "agents/a/skills/pdf", "agents/a/users",
		"agents/a/users/alice", "agents/a/users/alice/memory", "packages", "packages/p", "packages/p/src",
		"packages/q", "packages/q/gen", "src", "src/app", "src/app/components",
	}
	if got := w.dirs(); !reflect.DeepEqual(got, want) {
		t.Errorf("watched %q,\nwant %q", got, want)
	}
}

// A code repository with a large node_modules costs a watch per directory
// of its own sources, not one per directory of its dependencies.
func TestWatchCountInACodeRepository(t *testing.T) {
	root := writeFiles(t, map[string]string{"AGENTS.md": "# Agents\n", ".gitignore": "node_modules/\ncoverage/\n"})
	for i := range 1500 {
		mkdirs(t, root, fmt.Sprintf("node_modules/pkg%d/lib/sub", i%500))
	}
	for i := range 40 {
		mkdirs(t, root, fmt.Sprintf("src/mod%d", i), fmt.Sprintf("coverage/mod%d", i))
	}
	w, _ := startTestWatcher(t, root)
	if n := w.count(); n != 1+1+40 {
		t.Errorf("%d directories watched, want 42 (the root, src and its 40 modules)", n)
	}
}

// Changes in a new directory are seen (it is watched once created);
// changes under node_modules or a hidden directory are not reported.
func TestWatchReportsWorkspaceChangesOnly(t *testing.T) {
	root := writeFiles(t, map[string]string{"agent.yaml": "name: a\n", "SOUL.md": "# Soul\n", "node_modules/x/a.js": "1"})
	mkdirs(t, root, ".git/refs")
	w, changes := startTestWatcher(t, root)

	if err := os.WriteFile(filepath.Join(root, "node_modules/x/a.js"), []byte("2"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".git/refs/x"), []byte("2"), 0o644); err != nil {
		t.Fatal(err)
	}
	noChange(t, changes, "after writes under node_modules and .git")

	if err := os.WriteFile(filepath.Join(root, "SOUL.md"), []byte("# Soul\nkind\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitChange(t, changes, "after SOUL.md changed")

	mkdirs(t, root, "memory")
	waitChange(t, changes, "after memory/ was created")
	// The watch is in place before the change is reported.
	if !w.watchedDir("memory") {
		t.Fatalf("memory/ is not watched: %q", w.dirs())
	}
	if err := os.WriteFile(filepath.Join(root, "memory/2026-11-23.md"), []byte("## 09:00\nlog\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitChange(t, changes, "after a daily log was written in the new memory/")

	mkdirs(t, root, "node_modules/y")
	noChange(t, changes, "after a directory was created in node_modules")
}

// watchedDir reports whether the slash path d is watched.
func (w *watcher) watchedDir(d string) bool {
	return slices.Contains(w.dirs(), d)
}

// A changed .gitignore is a change, and the watched directories follow
// it: what it now ignores is no longer watched, what it no longer
// ignores is.
func TestWatchFollowsGitignore(t *testing.T) {
	root := writeFiles(t, map[string]string{"AGENTS.md": "# Agents\n", ".gitignore": "dist/\n"})
	mkdirs(t, root, "build/out", "dist/assets")
	w, changes := startTestWatcher(t, root)
	if got, want := w.dirs(), []string{".", "build", "build/out"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("watched %q, want %q", got, want)
	}
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("build/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitChange(t, changes, "after .gitignore changed")
	if got, want := w.dirs(), []string{".", "dist", "dist/assets"}; !reflect.DeepEqual(got, want) {
		t.Errorf("watched %q after .gitignore changed, want %q", got, want)
	}
}
