package gitsync

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	gogit "github.com/go-git/go-git/v5"
)

// TestGoGitSeesTheDeployReport: a client that stops reading at the end
// of report-status (go-git) still gets what the after-push hook writes,
// and git push still shows it and the result.
func TestGoGitSeesTheDeployReport(t *testing.T) {
	t.Parallel()
	h, url, _ := testHost(t, HostOptions{AfterPush: func(_ context.Context, p Event, remote io.Writer) {
		fmt.Fprintf(remote, "deployed %d ref(s) of %s\n", len(p.Refs), p.Name)
	}})
	if _, err := h.Create("ws"); err != nil {
		t.Fatal(err)
	}
	dir := clone(t, url+"/ws.git")
	commitFiles(t, dir, map[string]string{"AGENTS.md": "# Agents\n"}, "first")
	r, err := gogit.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	if err := r.Push(&gogit.PushOptions{RemoteName: "origin", Progress: &progress}); err != nil {
		t.Fatalf("go-git push: %v", err)
	}
	if !strings.Contains(progress.String(), "deployed 1 ref(s) of ws") {
		t.Errorf("go-git's progress lacks the deploy report:\n%s", progress.String())
	}

	commitFiles(t, dir, map[string]string{"SOUL.md": "# Soul\n"}, "second")
	out := git(t, dir, "push", "origin", "main")
	if !strings.Contains(out, "remote: deployed 1 ref(s) of ws") || !strings.Contains(out, "main -> main") {
		t.Errorf("git push output lacks the deploy report or the result:\n%s", out)
	}
}
