package daemon_test

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon"
)

// BenchmarkPushToServedLongHistory is BenchmarkPushToServed on a
// repository with 10,000 commits and 5,000 files (2,000 skills and 3,000
// memory documents of one agent): what a push costs once a workspace has
// a long life behind it (the target is the same ≤ 300 ms for the whole
// `git push`).
func BenchmarkPushToServedLongHistory(b *testing.B) {
	wt := longHistoryTree(b, 10_000, 2_000, 3_000)
	// The history is cloned into place, not pushed: the first push would
	// check each of the 10,000 commits, which is not what is measured.
	repos := filepath.Join(shortTempDir(b), "repos")
	git(b, wt, "clone", "-q", "--bare", wt, filepath.Join(repos, "agents.git"))
	td := startDaemon(b, daemon.Options{ReposDir: repos})
	td.waitIndexed(b)
	measurePushToServed(b, td, wt)
}

// longHistoryTree returns a work tree whose main has commits commits:
// the first adds the example agents, skills skills and docs memory
// documents to studybuddy, each later one changes one document. git
// fast-import writes it in a second or two.
func longHistoryTree(b *testing.B, commits, skills, docs int) string {
	b.Helper()
	files := copyTree(b, filepath.Join("..", "examples", "agents"))
	for i := range skills {
		files[fmt.Sprintf("studybuddy/skills/s%04d/SKILL.md", i)] = fmt.Sprintf("---\nname: s%04d\ndescription: Skill number %d, for the long-history benchmark.\n---\n\n# Skill %d\n\nSteps for task %d.\n", i, i, i, i)
	}
	for i := range docs {
		files[fmt.Sprintf("studybuddy/memory/topic-%04d.md", i)] = fmt.Sprintf("# Topic %d\n\nNotes on topic %d.\n", i, i)
	}
	var s bytes.Buffer
	when := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	commit := func(n int, body func()) { // later commits continue the branch
		fmt.Fprintf(&s, "commit refs/heads/main\ncommitter Bench <bench@example.com> %d +0000\ndata 9\ncommit %d\n", when+int64(n), n%10)
		body()
	}
	inline := func(path, content string) {
		fmt.Fprintf(&s, "M 100644 inline %s\ndata %d\n%s\n", path, len(content), content)
	}
	commit(0, func() {
		for p, c := range files {
			inline(p, c)
		}
	})
	for n := 1; n < commits; n++ {
		commit(n, func() {
			inline(fmt.Sprintf("studybuddy/memory/topic-%04d.md", n%docs), fmt.Sprintf("# Topic %d\n\nRevision %d.\n", n%docs, n))
		})
	}
	dir := b.TempDir()
	git(b, dir, "init", "-q", "-b", "main")
	git(b, dir, "config", "user.email", "bench@example.com")
	git(b, dir, "config", "user.name", "Bench")
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = dir
	cmd.Stdin = &s
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git fast-import: %v\n%s", err, out)
	}
	git(b, dir, "checkout", "-q", "-f", "main")
	return dir
}
