package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon"
)

// TestStatusShowsLastPush: `quire status` lists the last push to each
// hosted repository with the commit it stored, so a client cut off
// before git's report can tell whether its push was applied.
func TestStatusShowsLastPush(t *testing.T) {
	tmp, err := os.MkdirTemp("", "qp")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	gitRun := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	repos := filepath.Join(tmp, "repos")
	gitRun(tmp, "init", "-q", "--bare", "-b", "main", filepath.Join(repos, "ws.git"))
	wt := filepath.Join(tmp, "wt")
	gitRun(tmp, "init", "-q", "-b", "main", wt)
	if err := os.WriteFile(filepath.Join(wt, "agent.yaml"), []byte("name: bot\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(wt, "add", "-A")
	gitRun(wt, "commit", "-q", "-m", "first")
	head := gitRun(wt, "rev-parse", "HEAD")

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	sock := filepath.Join(tmp, "run", "q.sock")
	getenv := func(k string) string {
		if k == "XDG_RUNTIME_DIR" || k == "XDG_CONFIG_HOME" || k == "HOME" {
			return tmp
		}
		return ""
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var serveErr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--repos", repos, "--allow-create", "--git-listen", addr, "--socket", sock, "--cache-dir", filepath.Join(tmp, "cache"), "--log-level", "warn"},
			&env{stdout: &bytes.Buffer{}, stderr: &serveErr, getenv: getenv})
	}()
	quire := func(args ...string) (int, string) {
		var out, errOut bytes.Buffer
		code := run(context.Background(), args, &env{stdout: &out, stderr: &errOut, getenv: getenv})
		return code, out.String()
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		if code, _ := quire("status", "--socket", sock); code == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon did not start: %s", serveErr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	tok, err := daemon.LoadGitToken(daemon.DefaultStateDir(getenv), false)
	if err != nil {
		t.Fatal(err)
	}
	gitRun(wt, "push", "-q", "http://quire:"+tok+"@"+addr+"/ws.git", "main")
	code, out := quire("status", "--socket", sock)
	if code != 0 || !strings.Contains(out, "LAST PUSH") || !strings.Contains(out, "main "+head[:12]+" ok") {
		t.Fatalf("status after a push: %d\n%s", code, out)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
}
