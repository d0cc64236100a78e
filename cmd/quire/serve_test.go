package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeStatusSearch runs `quire serve --dir` and asks it with `quire
// status` and `quire search` over its socket; cancelling the context
// (SIGINT/SIGTERM in main) stops it and removes the socket.
func TestServeStatusSearch(t *testing.T) {
	tmp, err := os.MkdirTemp("", "qs")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	ws := filepath.Join(tmp, "ws")
	files := map[string]string{
		"agent.yaml": "name: bot\n",
		"SOUL.md":    "# Soul\n\nCalm.\n",
		"MEMORY.md":  "# Memory\n\nThe boiler is serviced every October.\n",
	}
	for name, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sock := filepath.Join(tmp, "run", "q.sock")
	getenv := func(k string) string {
		if k == "XDG_RUNTIME_DIR" || k == "XDG_CONFIG_HOME" || k == "HOME" {
			return tmp
		}
		return ""
	}
	ctx, cancel := context.WithCancel(context.Background())
	var serveErr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--dir", ws, "--socket", sock, "--cache-dir", filepath.Join(tmp, "cache"), "--log-level", "warn", "--ui-listen", "127.0.0.1:0"},
			&env{stdout: &bytes.Buffer{}, stderr: &serveErr, getenv: getenv})
	}()
	quire := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(context.Background(), args, &env{stdout: &out, stderr: &errOut, getenv: getenv})
		return code, out.String(), errOut.String()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, out, _ := quire("status", "--socket", sock)
		if code == 0 && strings.Contains(out, "bot") && strings.Contains(out, "dir:") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never showed the agent: %d %s\nserve: %s", code, out, serveErr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	var out string
	for {
		var code int
		code, out, _ = quire("search", "boiler service", "--socket", sock)
		if code == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.HasPrefix(out, "bot:MEMORY.md:1-3") {
		t.Fatalf("search through the daemon: %q", out)
	}
	if _, _, errOut := quire("search", "boiler service", "--socket", sock); !strings.Contains(errOut, "asking the daemon on "+sock) {
		t.Fatalf("search through the daemon does not say so: %q", errOut)
	}
	// quire ui prints a login link to the console's own listener, good
	// for one sign-in.
	code, out, errOut := quire("ui", "--no-browser", "--socket", sock)
	link, _, _ := strings.Cut(out, "\n")
	if code != 0 || !strings.HasPrefix(link, "http://127.0.0.1:") || !strings.Contains(link, "/ui/login?code=") {
		t.Fatalf("quire ui: %d %q %s", code, out, errOut)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for i, want := range []int{http.StatusSeeOther, http.StatusUnauthorized} {
		resp, err := noFollow.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("login link, use %d: %d, want %d", i+1, resp.StatusCode, want)
		}
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("serve exited %d: %s", code, serveErr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Fatalf("socket left behind: %v", err)
	}
	if code, _, errOut := quire("status", "--socket", sock); code != 1 || !strings.Contains(errOut, "is `quire serve` running") {
		t.Fatalf("status without a daemon: %d %s", code, errOut)
	}
	if code, _, errOut := quire("serve"); code != 2 || !strings.Contains(errOut, "source of truth") {
		t.Fatalf("serve without a source: %d %s", code, errOut)
	}
}

// TestServeRefusesToStart: `quire serve --repos` does not start without a
// usable git, nor on a directory another daemon serves; each says why in
// one line and exits 1.
func TestServeRefusesToStart(t *testing.T) {
	tmp, err := os.MkdirTemp("", "qr")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	getenv := func(k string) string {
		if k == "XDG_RUNTIME_DIR" || k == "HOME" {
			return tmp
		}
		return ""
	}
	serve := func(ctx context.Context, repos, listen, sock string, stderr *bytes.Buffer) int {
		return run(ctx, []string{"serve", "--repos", repos, "--git-listen", listen, "--socket", sock,
			"--cache-dir", filepath.Join(tmp, "cache"), "--log-level", "warn"}, &env{stdout: &bytes.Buffer{}, stderr: stderr, getenv: getenv})
	}
	fakeGit := filepath.Join(tmp, "bin", "git")
	for _, tc := range []struct {
		name, script, want string
	}{
		{"no git on PATH", "",
			"quire serve: --repos REPOS runs git (fetches, pushed packs, repacks): git 2.36 or later is needed on PATH, and none was found (Debian: apt-get install git)\n"},
		{"old git", "echo 'git version 2.30.2'",
			"quire serve: --repos REPOS runs git (fetches, pushed packs, repacks): git 2.36 or later is needed, and the git on PATH (" + fakeGit + ") is 2.30.2\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.RemoveAll(filepath.Dir(fakeGit))
			os.MkdirAll(filepath.Dir(fakeGit), 0o755)
			if tc.script != "" {
				if err := os.WriteFile(fakeGit, []byte("#!/bin/sh\n"+tc.script+"\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("PATH", filepath.Dir(fakeGit))
			repos := filepath.Join(tmp, "repos-"+strings.ReplaceAll(tc.name, " ", "-"))
			var stderr bytes.Buffer
			code := serve(context.Background(), repos, "127.0.0.1:0", filepath.Join(tmp, "run", "q.sock"), &stderr)
			if want := strings.ReplaceAll(tc.want, "REPOS", repos); code != 1 || stderr.String() != want {
				t.Fatalf("serve: exit %d, stderr\n%s\nwant exit 1 and\n%s", code, stderr.String(), want)
			}
		})
	}

	t.Run("repos held by another daemon", func(t *testing.T) {
		repos := filepath.Join(tmp, "repos")
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		ctx, cancel := context.WithCancel(context.Background())
		var firstErr bytes.Buffer
		done := make(chan int, 1)
		go func() { done <- serve(ctx, repos, addr, filepath.Join(tmp, "run", "first.sock"), &firstErr) }()
		defer func() {
			cancel()
			<-done
		}()
		for deadline := time.Now().Add(15 * time.Second); ; {
			if c, err := net.Dial("tcp", addr); err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the first daemon never listened: %s", firstErr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		var stderr bytes.Buffer
		code := serve(context.Background(), repos, "127.0.0.1:0", filepath.Join(tmp, "run", "second.sock"), &stderr)
		want := fmt.Sprintf("quire serve: --repos %s is in use by another quire serve (pid %d): two daemons on one directory would serve stale data; stop it, or give this one another --repos (lock file %s)\n",
			repos, os.Getpid(), filepath.Join(repos, ".quire-serve.lock"))
		if code != 1 || stderr.String() != want {
			t.Fatalf("second serve: exit %d, stderr\n%s\nwant exit 1 and\n%s", code, stderr.String(), want)
		}
	})
}

// TestServeSeveralDirs: --dir given twice serves both working trees.
func TestServeSeveralDirs(t *testing.T) {
	tmp, err := os.MkdirTemp("", "qd")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	writeTestFiles(t, filepath.Join(tmp, "a"), map[string]string{"agent.yaml": "name: ann\n"})
	writeTestFiles(t, filepath.Join(tmp, "b"), map[string]string{"agent.yaml": "name: ben\n"})
	sock := filepath.Join(tmp, "run", "q.sock")
	getenv := func(k string) string {
		if k == "XDG_RUNTIME_DIR" || k == "HOME" {
			return tmp
		}
		return ""
	}
	ctx, cancel := context.WithCancel(context.Background())
	var serveErr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--dir", filepath.Join(tmp, "a"), "--dir", filepath.Join(tmp, "b"), "--socket", sock,
			"--cache-dir", filepath.Join(tmp, "cache"), "--log-level", "warn"}, &env{stdout: &bytes.Buffer{}, stderr: &serveErr, getenv: getenv})
	}()
	defer func() {
		cancel()
		<-done
	}()
	var out bytes.Buffer
	for deadline := time.Now().Add(10 * time.Second); ; {
		out.Reset()
		code := run(context.Background(), []string{"status", "--socket", sock}, &env{stdout: &out, stderr: &bytes.Buffer{}, getenv: getenv})
		if code == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon did not start: %s", serveErr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, want := range []string{"ann", "ben", "dir:" + filepath.Join(tmp, "a"), "dir:" + filepath.Join(tmp, "b")} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status does not show %q:\n%s", want, out.String())
		}
	}
}
