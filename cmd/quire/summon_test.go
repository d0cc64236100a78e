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

	"github.com/quirehq/quire/agent"
	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/llm/llmtest"
	"github.com/quirehq/quire/workspace"
)

const cliKey = "sk-cli-test-0b9e33d1c4"

const cliSummon = `<file path="SOUL.md">
# Soul

Quiet, watchful, kind to late guests.
</file>
<file path="IDENTITY.md">
- **Name:** Nox
</file>
<file path="AGENTS.md">
# Operating

Log every late arrival in the daily log.
</file>
<file path="TOOLS.md">
# Tools

The night ledger.
</file>`

func gitIn(t *testing.T, dir string, args ...string) string {
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

// hotelCheckout is a git checkout with one agent, agents/concierge, and
// extra files in its work tree (not committed).
func hotelCheckout(t *testing.T, extra map[string]string) string {
	t.Helper()
	wt := t.TempDir()
	gitIn(t, wt, "init", "-q", "-b", "main")
	files := map[string]string{
		"agents/concierge/" + workspace.ConfigFile: "timezone: Europe/Lisbon\n",
		"agents/concierge/" + workspace.SoulFile:   "# Soul\n\nWarm.\n",
		"agents/concierge/" + workspace.MemoryFile: "# Memory\n\n- Breakfast until 10.\n",
	}
	for p, c := range files {
		writeFile(t, filepath.Join(wt, p), c)
	}
	gitIn(t, wt, "add", "-A")
	gitIn(t, wt, "commit", "-q", "-m", "hotel")
	for p, c := range extra {
		writeFile(t, filepath.Join(wt, p), c)
	}
	return wt
}

func writeFile(t *testing.T, p, c string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
		t.Fatal(err)
	}
}

func runQuire(t *testing.T, getenv func(string) string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: getenv})
	if strings.Contains(out.String()+errOut.String(), cliKey) {
		t.Fatalf("quire %v printed the key:\n%s\n%s", args, out.String(), errOut.String())
	}
	return code, out.String(), errOut.String()
}

func keyEnv(t *testing.T) func(string) string {
	base := testEnv(t)
	return func(k string) string {
		if k == "QUIRE_LLM_KEY" {
			return cliKey
		}
		return base(k)
	}
}

// branchCheck runs the one check on a branch's tree of the checkout.
func branchCheck(t *testing.T, wt, branch string) {
	t.Helper()
	repo, err := gitsync.Open(wt)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := repo.Snapshot(branch)
	if err != nil {
		t.Fatal(err)
	}
	if probs := workspace.Errors(agent.Check(context.Background(), snap, agent.CheckOptions{})); len(probs) != 0 {
		t.Fatalf("branch %s fails the check: %v", branch, probs)
	}
}

func TestSummonDir(t *testing.T) {
	srv := llmtest.New(llmtest.Reply{Content: cliSummon, Chunks: 6})
	srv.Key = cliKey
	defer srv.Close()
	wt := hotelCheckout(t, nil)
	head := gitIn(t, wt, "rev-parse", "HEAD")
	code, out, errOut := runQuire(t, keyEnv(t), "summon", "--dir", wt, "--agent", "night-porter", "--llm-url", srv.URL, "--llm-model", "m", "--llm-stream",
		"a", "night porter", "for a small hotel")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "proposals/night-porter/1") || !strings.Contains(out, "agents/night-porter/SOUL.md") || !strings.Contains(out, "git merge") {
		t.Fatalf("output:\n%s", out)
	}
	if r := srv.Requests(); len(r) != 1 || !r[0].Stream || !strings.Contains(r[0].Messages[1].Content, "a night porter for a small hotel") {
		t.Fatalf("requests: %+v", r)
	}
	// HEAD, the branch and the work tree are as they were.
	if gitIn(t, wt, "rev-parse", "HEAD") != head || gitIn(t, wt, "status", "--porcelain") != "" || gitIn(t, wt, "branch", "--show-current") != "main" {
		t.Fatal("summon --dir touched the checkout beyond its new branch")
	}
	branchCheck(t, wt, "proposals/night-porter/1")
	if got := gitIn(t, wt, "show", "proposals/night-porter/1:agents/night-porter/"+workspace.ToolsFile); !strings.Contains(got, "night ledger") {
		t.Fatalf("TOOLS.md on the branch: %q", got)
	}

	// A second summoning of another agent takes its own branch; an
	// invalid answer is refused with its problems and leaves none.
	srv.Script(llmtest.Reply{Content: strings.Replace(cliSummon, `<file path="AGENTS.md">`, `<file path="agent.yaml">
skills: nope
</file>
<file path="AGENTS.md">`, 1)})
	code, out, errOut = runQuire(t, keyEnv(t), "summon", "--dir", wt, "--agent", "doorman", "--llm-url", srv.URL, "--llm-model", "m", "a doorman")
	if code != 1 || !strings.Contains(errOut, "does not pass the checks") || !strings.Contains(errOut, "agents/doorman/agent.yaml:1") {
		t.Fatalf("invalid answer: exit %d\n%s\n%s", code, out, errOut)
	}
	if b := gitIn(t, wt, "branch", "--list", "proposals/doorman/*"); b != "" {
		t.Fatalf("a refused answer left a branch: %s", b)
	}
	// A wrong key: the error names the endpoint and never the key.
	srv.Key = "sk-other"
	code, _, errOut = runQuire(t, keyEnv(t), "summon", "--dir", wt, "--agent", "doorman", "--llm-url", srv.URL, "--llm-model", "m", "a doorman")
	if code != 1 || !strings.Contains(errOut, "401 Unauthorized") || !strings.Contains(errOut, srv.URL) {
		t.Fatalf("wrong key: exit %d\n%s", code, errOut)
	}
}

func TestConsolidateDir(t *testing.T) {
	srv := llmtest.New(llmtest.Reply{Content: "<file path=\"MEMORY.md\">\n# Memory\n\n- Breakfast until 10.\n- Room 4 checks out late.\n</file>"})
	defer srv.Close()
	today := time.Now().In(mustLocation(t, "Europe/Lisbon"))
	wt := hotelCheckout(t, map[string]string{
		"agents/concierge/" + workspace.DailyLog(today): "## 08:00\n\nRoom 4 asked to check out late.\n",
	})
	code, out, errOut := runQuire(t, keyEnv(t), "consolidate", "--dir", wt, "--days", "2", "--llm-url", srv.URL, "--llm-model", "m", "concierge")
	if code != 0 || !strings.Contains(out, "proposals/concierge/1") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if got := srv.Requests()[0].Messages[1].Content; !strings.Contains(got, "Room 4 asked to check out late.") {
		t.Fatalf("the log was not sent:\n%s", got)
	}
	if got := gitIn(t, wt, "show", "proposals/concierge/1:agents/concierge/"+workspace.MemoryFile); !strings.Contains(got, "checks out late") {
		t.Fatalf("MEMORY.md on the branch: %q", got)
	}
	branchCheck(t, wt, "proposals/concierge/1")
}

func mustLocation(t *testing.T, name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// TestSummonThroughTheDaemon: quire summon without --dir asks the running
// daemon, which asks its model (quire serve --llm-url) and proposes a
// branch of its hosted repository; main does not move.
func TestSummonThroughTheDaemon(t *testing.T) {
	srv := llmtest.New(llmtest.Reply{Content: cliSummon})
	srv.Key = cliKey
	defer srv.Close()
	tmp, err := os.MkdirTemp("", "qs")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	wt := hotelCheckout(t, nil)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	repos, sock := filepath.Join(tmp, "repos"), filepath.Join(tmp, "run", "q.sock")
	getenv := func(k string) string {
		switch k {
		case "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "HOME":
			return tmp
		case "OPENAI_API_KEY":
			return cliKey
		}
		return ""
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var serveErr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--repos", repos, "--allow-create", "--git-listen", addr, "--socket", sock, "--cache-dir", filepath.Join(tmp, "cache"),
			"--log-level", "debug", "--llm-url", srv.URL, "--llm-model", "m"}, &env{stdout: &bytes.Buffer{}, stderr: &serveErr, getenv: getenv})
	}()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if code, _, _ := runQuire(t, getenv, "status", "--socket", sock); code == 0 {
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
	gitIn(t, wt, "push", "-q", "http://quire:"+tok+"@"+addr+"/hotel.git", "main")
	code, out, errOut := runQuire(t, getenv, "summon", "--socket", sock, "--agent", "night-porter", "a night porter")
	if code != 0 || !strings.Contains(out, "proposals/night-porter/1") || !strings.Contains(out, "nothing is deployed until a person merges it") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	bare := filepath.Join(repos, "hotel.git")
	if got := gitIn(t, bare, "rev-parse", "main"); got != gitIn(t, wt, "rev-parse", "HEAD") {
		t.Fatal("main moved")
	}
	gitIn(t, bare, "show", "proposals/night-porter/1:agents/night-porter/"+workspace.SoulFile)
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
	if strings.Contains(serveErr.String(), cliKey) {
		t.Fatal("the daemon's log holds the key")
	}
}
