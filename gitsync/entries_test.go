package gitsync

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quirehq/quire/workspace"
)

// TestEntriesRefusedOnEveryRef: a symbolic link, a gitlink and a name with
// a control character are refused on main (checked before the merge with
// live, which must not turn a link into a file), on live and on any other
// branch, each with a remote: error line naming the path; nothing moves.
func TestEntriesRefusedOnEveryRef(t *testing.T) {
	t.Parallel()
	h, url, dir := testHost(t, HostOptions{Live: true})
	bare := filepath.Join(dir, "ws.git")
	repoURL := url + "/ws.git"
	src := newWorkRepo(t, map[string]string{"AGENTS.md": "v0\n", "SOUL.md": "soul\n"})
	git(t, src, "push", "-q", repoURL, "main")
	r, err := h.Repository("ws")
	if err != nil {
		t.Fatal(err)
	}
	// live has moved (an agent wrote), so a push to main is merged.
	agentWrite(t, r, map[string]string{"MEMORY.md": "# Memory\n\nagent\n"})

	tests := []struct {
		name  string
		stage func(t *testing.T, work string)
		want  string // the remote: error line's text after "error:   "
	}{
		{"symlink", func(t *testing.T, work string) {
			if err := os.Remove(filepath.Join(work, "SOUL.md")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("/etc/passwd", filepath.Join(work, "SOUL.md")); err != nil {
				t.Fatal(err)
			}
			git(t, work, "add", "-A")
		}, "SOUL.md: symbolic links are not allowed"},
		{"gitlink", func(t *testing.T, work string) {
			git(t, work, "update-index", "--add", "--cacheinfo", "160000,"+strings.Repeat("1", 40)+",vendor/lib")
		}, "vendor/lib: is a gitlink (a submodule)"},
		{"newline in a name", func(t *testing.T, work string) {
			writeFiles(t, work, map[string]string{"notes/a\nb.md": "x\n"})
			git(t, work, "add", "-A")
		}, `notes/a␊b.md: the name "notes/a\nb.md" holds a control character (U+000A at byte 7)`},
	}
	for _, tt := range tests {
		for _, ref := range []string{"main", "live", "feature"} {
			t.Run(tt.name+"/"+ref, func(t *testing.T) {
				work := clone(t, repoURL)
				if ref == "live" {
					git(t, work, "fetch", "-q", "origin", "live")
					git(t, work, "checkout", "-q", "-B", "main", "FETCH_HEAD")
				}
				tt.stage(t, work)
				git(t, work, "commit", "-q", "-m", tt.name)
				before := git(t, bare, "for-each-ref")
				out, err := gitTry(work, "push", "origin", "HEAD:refs/heads/"+ref)
				if err == nil {
					t.Fatalf("push accepted:\n%s", out)
				}
				if !strings.Contains(out, "remote: error:   "+tt.want) {
					t.Errorf("no remote: error line %q in:\n%s", tt.want, out)
				}
				if after := git(t, bare, "for-each-ref"); after != before {
					t.Errorf("refs moved:\n%s\nwas\n%s", after, before)
				}
			})
		}
	}
}

// TestMergeKeepsModes: a file main adds as executable, and one it changes
// from executable to regular, keep their modes in live's merge.
func TestMergeKeepsModes(t *testing.T) {
	t.Parallel()
	h, url, dir := testHost(t, HostOptions{Live: true})
	bare := filepath.Join(dir, "ws.git")
	repoURL := url + "/ws.git"
	src := newWorkRepo(t, map[string]string{"AGENTS.md": "v0\n", "tools/run.sh": "#!/bin/sh\n"})
	git(t, src, "update-index", "--chmod=+x", "tools/run.sh")
	git(t, src, "commit", "-q", "-m", "exec")
	git(t, src, "push", "-q", repoURL, "main")
	r, err := h.Repository("ws")
	if err != nil {
		t.Fatal(err)
	}
	agentWrite(t, r, map[string]string{"MEMORY.md": "# Memory\n\nagent\n"})
	writeFiles(t, src, map[string]string{"tools/new.sh": "#!/bin/sh\necho\n"})
	git(t, src, "add", "-A")
	git(t, src, "update-index", "--chmod=+x", "tools/new.sh")
	git(t, src, "update-index", "--chmod=-x", "tools/run.sh")
	git(t, src, "commit", "-q", "-m", "modes")
	if out, err := gitTry(src, "push", repoURL, "main"); err != nil {
		t.Fatalf("push refused:\n%s", out)
	}
	for path, want := range map[string]string{"tools/new.sh": "100755", "tools/run.sh": "100644", "MEMORY.md": "100644"} {
		got := strings.Fields(git(t, bare, "ls-tree", "live", path))
		if len(got) == 0 || got[0] != want {
			t.Errorf("live %s: mode %v, want %s", path, got, want)
		}
	}
}

// TestRefFloodValidatedOnce: 300 refs that name one commit cost one
// validation, and a push whose validation outlives ValidateTimeout has
// its remaining refs refused with a remote: line that says why.
func TestRefFloodValidatedOnce(t *testing.T) {
	var calls atomic.Int32
	block := make(chan struct{})
	slow := atomic.Bool{}
	validator := ValidatorFunc(func(ctx context.Context, _ RefUpdate, _ *Snapshot, _ []Change) []workspace.Problem {
		calls.Add(1)
		if slow.Load() {
			select {
			case <-ctx.Done():
			case <-block:
			}
		}
		return nil
	})
	_, url, dir := testHost(t, HostOptions{Validator: validator, ValidateTimeout: 200 * time.Millisecond})
	bare := filepath.Join(dir, "ws.git")
	src := newWorkRepo(t, map[string]string{"AGENTS.md": "v0\n"})
	var specs []string
	for i := range 300 {
		specs = append(specs, fmt.Sprintf("HEAD:refs/tags/t%d", i))
	}
	if out, err := gitTry(src, append([]string{"push", "-q", url + "/ws.git"}, specs...)...); err != nil {
		t.Fatalf("push of 300 refs refused:\n%s", out)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("300 refs at one commit validated %d times, want once", n)
	}
	if got := len(strings.Fields(git(t, bare, "for-each-ref", "--format=%(refname)", "refs/tags"))); got != 300 {
		t.Errorf("%d tags stored, want 300", got)
	}

	// Slow validation: the deadline refuses what is left.
	slow.Store(true)
	defer close(block)
	commitFiles(t, src, map[string]string{"AGENTS.md": "v1\n"}, "v1")
	out, err := gitTry(src, "push", url+"/ws.git", "HEAD:refs/heads/a", "HEAD~1:refs/heads/b")
	if err == nil {
		t.Fatalf("a push past its validation deadline was accepted:\n%s", out)
	}
	if !strings.Contains(out, "validating this push took longer than 200ms; push fewer refs at once") {
		t.Errorf("no remote: line says why:\n%s", out)
	}
}
