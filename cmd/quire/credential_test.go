package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCredentialHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1:7480": true, "127.8.9.1": true, "[::1]:7480": true, "localhost:7480": true, "LOCALHOST": true,
		"github.com": false, "10.0.0.1:7480": false, "quire.internal": true, "quire.internal:443": true, "": false,
	} {
		if got := credentialHost(host, []string{"quire.internal"}); got != want {
			t.Errorf("credentialHost(%q) = %v, want %v", host, got, want)
		}
	}
}

// quireOnPath puts this test binary on a PATH as `quire` (TestMain runs
// it as the CLI under that name), in a directory any user may read, and
// returns that directory.
func quireOnPath(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "qbin")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(filepath.Join(dir, "quire"), os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	return dir
}

// TestGitEndpointNeedsToken: `quire serve --repos` makes a token on first
// start (0600 in a 0700 state directory); with `quire git-credential` as
// git's credential helper the daemon's user pushes without typing
// anything, and without it (or as another local user) nothing is cloned,
// pushed or asked over the socket.
func TestGitEndpointNeedsToken(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	tmp, err := os.MkdirTemp("", "qg")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	bin := quireOnPath(t)
	state := filepath.Join(tmp, "state")
	sock := filepath.Join(tmp, "run", "q.sock")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	getenv := func(k string) string {
		switch k {
		case "XDG_RUNTIME_DIR", "HOME":
			return tmp
		case "XDG_STATE_HOME":
			return filepath.Join(tmp, "nostate") // --state-dir wins
		}
		return ""
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var serveErr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--repos", filepath.Join(tmp, "repos"), "--git-listen", addr, "--state-dir", state, "--allow-create",
			"--socket", sock, "--cache-dir", filepath.Join(tmp, "cache"), "--log-level", "warn"},
			&env{stdout: io.Discard, stderr: &serveErr, getenv: getenv})
	}()
	defer func() {
		cancel()
		<-done
	}()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the git endpoint never listened: %s", serveErr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	for path, want := range map[string]os.FileMode{state: 0o700, filepath.Join(state, "git-token"): 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Fatalf("%s: %v %v, want mode %v", path, fi, err, want)
		}
	}

	wt := filepath.Join(tmp, "wt")
	os.MkdirAll(filepath.Join(wt, "bot"), 0o755)
	os.WriteFile(filepath.Join(wt, "bot", "agent.yaml"), []byte("name: bot\n"), 0o644)
	os.WriteFile(filepath.Join(wt, "bot", "SOUL.md"), []byte("# Soul\n\nCalm.\n"), 0o644)
	gitEnv := append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME="+tmp,
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
	gitCmd := func(dir string, args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = gitEnv
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-qm", "bot"}} {
		if out, err := gitCmd(wt, args...); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	// Pushes do not create repositories (gitsync.HostOptions.AllowCreate
	// is off): make it.
	if out, err := gitCmd(tmp, "init", "-q", "--bare", "-b", "main", filepath.Join(tmp, "repos", "bot.git")); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	url := "http://" + addr + "/bot.git"
	if out, err := gitCmd(wt, "push", url, "main"); err == nil {
		t.Fatalf("a push without a token was accepted:\n%s", out)
	}
	helper := "credential.helper=!quire git-credential --state-dir " + state
	if out, err := gitCmd(wt, "-c", helper, "push", url, "main"); err != nil || !strings.Contains(out, "bot: deployed") {
		t.Fatalf("push with the credential helper: %v\n%s", err, out)
	}
	if out, err := gitCmd(tmp, "clone", "-q", url, "anon"); err == nil {
		t.Fatalf("a clone without a token was accepted:\n%s", out)
	}

	if os.Getuid() != 0 {
		t.Log("not root: the second-local-user half is not run")
		return
	}
	// Another local user (nobody), with the same helper configured: it
	// cannot read the token, so it cannot clone; nor can it use the socket.
	home, err := os.MkdirTemp("", "qnobody")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(home)
	os.Chmod(home, 0o755)
	os.Chown(home, 65534, 65534)
	asNobody := func(name string, args ...string) (string, error) {
		cmd := exec.Command(name, args...)
		cmd.Dir = home
		cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + home, "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "XDG_RUNTIME_DIR=" + home}
		runAsUser(cmd, 65534, 65534)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := asNobody("git", "-c", helper, "clone", "-q", url, "stolen"); err == nil || !strings.Contains(out, "401") && !strings.Contains(out, "Authentication failed") && !strings.Contains(out, "could not read Username") {
		t.Fatalf("another local user cloned:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(home, "stolen", "bot", "SOUL.md")); err == nil {
		t.Fatal("another local user has the files")
	}
	if out, err := asNobody(filepath.Join(bin, "quire"), "status", "--socket", sock); err == nil || !strings.Contains(out, "is `quire serve` running") && !strings.Contains(out, "permission denied") {
		t.Fatalf("another local user used the socket:\n%s", out)
	}
}
