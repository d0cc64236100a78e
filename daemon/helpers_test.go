package daemon_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/client"
	"github.com/quirehq/quire/internal/testenv"
)

// botFiles is a small single-agent workspace.
var botFiles = map[string]string{
	"agent.yaml":               "name: bot\ntype: predefined\nwrite_limit_bytes: 200\ntimezone: Europe/Lisbon\n",
	"AGENTS.md":                "# Agents\n\nBe brief.\n",
	"SOUL.md":                  "# Soul\n\nCalm and exact. MARKER-ONE\n",
	"TOOLS.md":                 "# Tools\n\nNone.\n",
	"USER.md":                  "# User\n\nShared default.\n",
	"MEMORY.md":                "# Memory\n\nThe wifi password is on the fridge.\n",
	"memory/2020-01-01.md":     "# 2020-01-01\n\nAn old day.\n",
	"skills/greeting/SKILL.md": "---\nname: greeting\ndescription: Greet a guest warmly at the front desk.\n---\nSay hello. Files in {baseDir}.\n",
}

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Tester", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=Tester", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// gitMay runs git and returns its output and error without failing.
func gitMay(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Tester", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=Tester", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// newWorkTree makes a git work tree holding files, committed on main.
func newWorkTree(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	testenv.WriteFiles(t, dir, files)
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "workspace")
	return dir
}

// copyTree copies the directory src into a new work tree.
func copyTree(t testing.TB, src string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

type testDaemon struct {
	d      *daemon.Daemon
	c      *client.Client
	remote string // git URL base, e.g. http://127.0.0.1:1234
	repos  string
	stop   func()
}

// shortTempDir returns a short temporary directory: unix socket paths
// are limited to about 100 bytes.
func shortTempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "qd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// startDaemon runs a daemon hosting repositories until the test ends.
func startDaemon(t testing.TB, opts daemon.Options) *testDaemon {
	t.Helper()
	tmp := shortTempDir(t)
	if opts.ReposDir == "" && opts.Dir == "" && len(opts.Dirs) == 0 && opts.Upstream == "" {
		opts.ReposDir = filepath.Join(tmp, "repos")
	}
	if opts.GitListen == "" {
		opts.GitListen = "127.0.0.1:0"
	}
	opts.AllowCreate = true // the tests create repositories by pushing
	if opts.Socket == "" {
		opts.Socket = filepath.Join(tmp, "run", "q.sock")
	}
	if opts.CacheDir == "" {
		opts.CacheDir = filepath.Join(tmp, "cache")
	}
	if opts.Logger == nil && testing.Verbose() {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	ctx, cancel := context.WithCancel(context.Background())
	d, err := daemon.New(ctx, opts)
	if err != nil {
		cancel()
		t.Fatalf("daemon.New: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	select {
	case <-d.Ready():
	case err := <-done:
		cancel()
		t.Fatalf("daemon.Run: %v", err)
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("daemon not ready after 10 s")
	}
	td := &testDaemon{d: d, c: &client.Client{Socket: opts.Socket}, remote: "http://" + d.GitAddr(), repos: opts.ReposDir}
	stopped := false
	td.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("daemon.Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("daemon did not stop within 30 s")
		}
	}
	t.Cleanup(td.stop)
	return td
}

// push pushes the work tree's main to the hosted repository name and
// returns git's output.
func (td *testDaemon) push(t testing.TB, dir, name string) string {
	t.Helper()
	return git(t, dir, "push", td.remote+"/"+name+".git", "main")
}

func apiStatus(err error) int {
	var e *api.Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// subscribe opens td's event stream, returning once the daemon answered:
// every event published from then on is delivered, until ctx ends.
func (td *testDaemon) subscribe(t testing.TB, ctx context.Context) <-chan api.Event {
	t.Helper()
	ch, err := td.c.Subscribe(ctx)
	if err != nil {
		t.Fatalf("subscribe to the events: %v", err)
	}
	return ch
}

// deploys subscribes to td's events and returns the commits td deploys
// from then on.
func (td *testDaemon) deploys(t testing.TB, ctx context.Context) <-chan string {
	t.Helper()
	events := td.subscribe(t, ctx)
	out := make(chan string, 1024)
	go func() {
		for e := range events {
			if e.Type == "deploy" {
				out <- e.Commit
			}
		}
	}()
	return out
}

// waitIndexed waits (10 s at most) until td's memory store holds every
// agent's deployed revision.
func (td *testDaemon) waitIndexed(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := td.d.WaitIndexed(ctx); err != nil {
		t.Fatalf("waiting for the index: %v", err)
	}
}

// waitFor polls cond until it holds or 10 s pass.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// raw sends one HTTP request over the daemon's socket and returns the
// status, the headers and the body.
func (td *testDaemon) raw(t testing.TB, method, path string, header http.Header, body string) (int, http.Header, string) {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", td.c.Socket)
	}}}
	req, err := http.NewRequest(method, "http://quire"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if _, set := req.Header["Content-Type"]; method == http.MethodPut && !set {
		req.Header.Set("Content-Type", "text/markdown") // a file write's raw content
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}
