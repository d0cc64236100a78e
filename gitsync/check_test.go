package gitsync

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A refused push is logged with its reason, not only as a count.
func TestRefusedPushIsLoggedWithItsReason(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	_, url, _ := testHost(t, HostOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	work := newWorkRepo(t, map[string]string{"AGENTS.md": "# A\n"})
	if err := os.Symlink("AGENTS.md", filepath.Join(work, "SOUL.md")); err != nil {
		t.Fatal(err)
	}
	git(t, work, "add", "-A")
	git(t, work, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "link")
	if out, err := gitTry(work, "push", url+"/ws.git", "main"); err == nil {
		t.Fatalf("the push of a symbolic link was accepted:\n%s", out)
	}
	got := logs.String()
	if !strings.Contains(got, "push refused") || !strings.Contains(got, "refs/heads/main") || !strings.Contains(got, "SOUL.md: symbolic links are not allowed") {
		t.Fatalf("log:\n%s", got)
	}
}
