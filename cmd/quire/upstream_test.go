package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/client"
)

const upstreamToken = "upstok-7d2a9e41c0b3f856"

func TestReadUpstreamCredential(t *testing.T) {
	dir := t.TempDir()
	env := func(k string) string {
		if k == upstreamTokenEnv {
			return " follower:" + upstreamToken + "\n"
		}
		return ""
	}
	for _, tc := range []struct {
		name, content string
		mode          os.FileMode
		want, err     string
	}{
		{"user and token", "follower:" + upstreamToken + "\n", 0o600, "follower:" + upstreamToken, ""},
		{"a token", upstreamToken + "\r\n", 0o400, upstreamToken, ""},
		{"readable by others", "follower:" + upstreamToken + "\n", 0o644, "", "chmod 600"},
		{"writable by the group", "follower:" + upstreamToken + "\n", 0o620, "", "chmod 600"},
		{"empty", "\n", 0o600, "", "is empty"},
		{"two lines", "follower:" + upstreamToken + "\nmore\n", 0o600, "", "more than one line"},
		{"missing", "", 0, "", "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
			if tc.mode != 0 {
				if err := os.WriteFile(p, []byte(tc.content), tc.mode); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(p, tc.mode); err != nil { // past the umask
					t.Fatal(err)
				}
			}
			got, err := readUpstreamCredential("http://host/a.git", p, env)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "--upstream-credential-file") {
					t.Fatalf("err %v, want one naming the flag and %q", err, tc.err)
				}
				if strings.Contains(err.Error(), upstreamToken) {
					t.Fatalf("the error quotes the token: %v", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if got, err := readUpstreamCredential("http://host/a.git", "", env); err != nil || got != "follower:"+upstreamToken {
		t.Errorf("from $%s: %q, %v", upstreamTokenEnv, got, err)
	}
	if got, err := readUpstreamCredential("", "", env); err != nil || got != "" {
		t.Errorf("without --upstream: %q, %v, want nothing", got, err)
	}
}

// lockedBuffer is a bytes.Buffer that a running command writes while the
// test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestServeUpstreamCredential: `quire serve --upstream` follows a host
// that requires a token, with the token from --upstream-credential-file,
// from $QUIRE_UPSTREAM_TOKEN, or (warned against) from the URL; it
// fetches and writes with it, and neither its log nor `quire status`
// shows it.
func TestServeUpstreamCredential(t *testing.T) {
	tmp, err := os.MkdirTemp("", "qu")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	host, err := daemon.New(ctx, daemon.Options{ReposDir: filepath.Join(tmp, "repos"), AllowCreate: true, GitListen: "127.0.0.1:0",
		GitTokens: []daemon.GitToken{{User: "follower", Token: upstreamToken}},
		Socket:    filepath.Join(tmp, "host.sock"), CacheDir: filepath.Join(tmp, "host-cache")})
	if err != nil {
		t.Fatal(err)
	}
	hostDone := make(chan error, 1)
	go func() { hostDone <- host.Run(ctx) }()
	defer func() { cancel(); <-hostDone }()
	<-host.Ready()
	wt := filepath.Join(tmp, "wt")
	if err := os.MkdirAll(wt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt, "agent.yaml"), []byte("name: bot\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"commit", "-q", "-m", "workspace"},
		{"push", "-q", "http://follower:" + upstreamToken + "@" + host.GitAddr() + "/bot.git", "main"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = wt
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0",
			"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	plain := "http://" + host.GitAddr() + "/bot.git"
	credFile := filepath.Join(tmp, "upstream-credential")
	if err := os.WriteFile(credFile, []byte("follower:"+upstreamToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name  string
		args  []string
		env   string // $QUIRE_UPSTREAM_TOKEN
		warns bool
	}{
		{"file", []string{"--upstream", plain, "--upstream-credential-file", credFile}, "", false},
		{"environment", []string{"--upstream", plain}, "follower:" + upstreamToken, false},
		{"URL", []string{"--upstream", strings.Replace(plain, "://", "://follower:"+upstreamToken+"@", 1)}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(tmp, tc.name)
			sock := filepath.Join(dir, "q.sock")
			getenv := func(k string) string {
				switch k {
				case "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "HOME":
					return dir
				case upstreamTokenEnv:
					return tc.env
				}
				return ""
			}
			sctx, stop := context.WithCancel(context.Background())
			serveErr := &lockedBuffer{}
			done := make(chan int, 1)
			args := append([]string{"serve", "--socket", sock, "--cache-dir", filepath.Join(dir, "cache"), "--log-level", "debug", "--poll", "200ms"}, tc.args...)
			go func() { done <- run(sctx, args, &env{stdout: &bytes.Buffer{}, stderr: serveErr, getenv: getenv}) }()
			defer func() {
				stop()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					t.Error("serve did not stop")
				}
			}()
			quire := func(args ...string) (int, string) {
				var out, errOut bytes.Buffer
				code := run(context.Background(), args, &env{stdout: &out, stderr: &errOut, getenv: getenv})
				return code, out.String() + errOut.String()
			}
			var status string
			for deadline := time.Now().Add(15 * time.Second); ; {
				code, out := quire("status", "--socket", sock)
				if code == 0 && strings.Contains(out, "\nbot ") && strings.Contains(out, "upstream:"+plain) {
					status = out
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the follower did not deploy bot: %d %s\nserve: %s", code, out, serveErr.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			c := &client.Client{Socket: sock}
			if _, err := c.MemoryAppend(context.Background(), "bot", api.AppendRequest{Text: "through " + tc.name}); err != nil {
				t.Fatalf("a write through the upstream: %v", err)
			}
			_, js := quire("status", "--socket", sock, "--json")
			stop()
			<-done
			done <- 0
			all := status + js + serveErr.String()
			if strings.Contains(all, upstreamToken) {
				t.Fatalf("the token is shown:\nstatus: %s\n%s\nserve: %s", status, js, serveErr.String())
			}
			if warned := strings.Contains(serveErr.String(), "--upstream-credential-file FILE"); warned != tc.warns {
				t.Errorf("warned about the URL's credential: %v, want %v\n%s", warned, tc.warns, serveErr.String())
			}
		})
	}
}
