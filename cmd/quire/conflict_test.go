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

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/client"
)

// TestConflictWalkthrough runs the README's conflict resolution as a new
// user would, on a machine where git was never configured: HOME is an
// empty directory, no system configuration, and the only global settings
// are the ones the README's walkthrough has the user make (the credential
// helper, and the name and e-mail git needs to commit). A person and an
// agent change the same line of MEMORY.md; the push is refused, and the
// commands the refusal names, run word for word, resolve it.
func TestConflictWalkthrough(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	tmp, err := os.MkdirTemp("", "qc")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	home := filepath.Join(tmp, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	bin := quireOnPath(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	sock := filepath.Join(tmp, "run", "q.sock")
	// The daemon keeps its token where `quire git-credential` looks for
	// it without flags: $HOME/.local/state/quire.
	getenv := func(k string) string {
		switch k {
		case "HOME":
			return home
		case "XDG_RUNTIME_DIR":
			return tmp
		}
		return ""
	}
	ctx, cancel := context.WithCancel(context.Background())
	var serveErr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--repos", filepath.Join(tmp, "repos"), "--allow-create", "--git-listen", addr,
			"--socket", sock, "--cache-dir", filepath.Join(tmp, "cache"), "--log-level", "warn"},
			&env{stdout: io.Discard, stderr: &serveErr, getenv: getenv})
	}()
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
			t.Fatalf("the git endpoint never listened: %s", serveErr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	// git as a new user runs it: nothing of this process's git, XDG or
	// editor settings. GIT_EDITOR=false makes any command that would open
	// an editor fail, so the walkthrough must not need one.
	var gitEnv []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") || strings.HasPrefix(k, "XDG_") || k == "HOME" || k == "PATH" || k == "EDITOR" || k == "VISUAL" {
			continue
		}
		gitEnv = append(gitEnv, kv)
	}
	gitEnv = append(gitEnv, "HOME="+home, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=false")
	sh := func(dir string, args ...string) (string, error) {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = dir
		cmd.Env = gitEnv
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	must := func(dir string, args ...string) string {
		t.Helper()
		out, err := sh(dir, args...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}

	// The walkthrough's set-up.
	url := "http://" + addr + "/agents.git"
	must(home, "git", "config", "--global", "credential.http://"+addr+".helper", "!quire git-credential")
	must(home, "git", "config", "--global", "user.name", "Ines Carvalho")
	must(home, "git", "config", "--global", "user.email", "ines@example.com")
	if got := strings.Split(strings.TrimSpace(must(home, "git", "config", "--list")), "\n"); len(got) != 3 {
		t.Fatalf("git has settings the walkthrough did not make: %q", got)
	}
	wt := filepath.Join(tmp, "agents")
	writeTestFiles(t, wt, map[string]string{
		"agent.yaml": "name: bot\n",
		"SOUL.md":    "# Soul\n\nCalm.\n",
		"MEMORY.md":  "# Memory\n\nThe wifi password is on the fridge.\n",
	})
	must(wt, "git", "init", "-q", "-b", "main")
	must(wt, "git", "add", "-A")
	must(wt, "git", "commit", "-qm", "agents")
	if out := must(wt, "git", "push", url, "main"); !strings.Contains(out, "bot: deployed") {
		t.Fatalf("first push: no deploy report:\n%s", out)
	}

	// The agent and the person change the same line.
	c := &client.Client{Socket: sock}
	f, err := c.ReadFile(context.Background(), "bot", "MEMORY.md", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteFile(context.Background(), "bot", "MEMORY.md", "", f.ETag, []byte("# Memory\n\nThe wifi password is in the drawer.\n")); err != nil {
		t.Fatal(err)
	}
	writeTestFiles(t, wt, map[string]string{"MEMORY.md": "# Memory\n\nThe wifi password is taped under the router.\n"})
	must(wt, "git", "commit", "-qam", "person edits memory")
	out, err := sh(wt, "git", "push", url, "main")
	if err == nil {
		t.Fatalf("a conflicting push was accepted:\n%s", out)
	}

	// What the refusal says to do, run as it says.
	const prefix = "remote: error: to resolve: "
	i := strings.Index(out, prefix)
	if i < 0 {
		t.Fatalf("the refusal says nothing to do:\n%s", out)
	}
	hint, _, _ := strings.Cut(out[i+len(prefix):], "\n")
	steps := strings.Split(strings.TrimSpace(hint), ", ")
	want := []string{"git pull --no-rebase " + url + " live", "fix the conflicts", "git commit -a --no-edit", "push again"}
	if strings.Join(steps, "|") != strings.Join(want, "|") {
		t.Fatalf("hint %q, want the steps %q", hint, want)
	}
	if out, err := sh(wt, strings.Fields(steps[0])...); err == nil || !strings.Contains(out, "CONFLICT (content): Merge conflict in MEMORY.md") {
		t.Fatalf("%s: %v, want it to stop at the conflict in MEMORY.md:\n%s", steps[0], err, out)
	}
	writeTestFiles(t, wt, map[string]string{"MEMORY.md": "# Memory\n\nThe wifi password is in the drawer, and taped under the router.\n"})
	must(wt, strings.Fields(steps[2])...)
	if out := must(wt, "git", "push", url, "main"); !strings.Contains(out, "bot: deployed") {
		t.Fatalf("push after the resolution: no deploy report:\n%s", out)
	}
	if parents := strings.Fields(must(wt, "git", "log", "-1", "--format=%P")); len(parents) != 2 {
		t.Fatalf("the resolution is not a merge: parents %v", parents)
	}
	p, err := c.Prompt(context.Background(), "bot", api.PromptRequest{})
	if err != nil || !strings.Contains(p.Prompt, "in the drawer, and taped under the router") {
		t.Fatalf("the resolution is not served: %v\n%s", err, p.Prompt)
	}
}

// writeTestFiles writes files (slash-separated path → content) under dir.
func writeTestFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
