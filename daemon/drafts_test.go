package daemon_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quirehq/quire/agent"
	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/llm"
	"github.com/quirehq/quire/llm/llmtest"
	"github.com/quirehq/quire/workspace"
)

const draftKey = "sk-daemon-test-5d1c0e77a9"

const summonAnswer = `<file path="SOUL.md">
# Soul

You review Rust with a dry wit, and you are never cruel.
</file>
<file path="IDENTITY.md">
- **Name:** Ferris
- **Vibe:** dry
</file>
<file path="AGENTS.md">
# Operating

Read MEMORY.md first. Ask before you push.
</file>
<file path="agent.yaml">
identity: You are Ferris, a sarcastic Rust reviewer.
</file>`

// draftDaemon is a daemon asking srv, with its log kept.
func draftDaemon(t *testing.T, srv *llmtest.Server, opts daemon.Options) (*testDaemon, *syncBuffer) {
	t.Helper()
	c, err := llm.New(llm.Options{URL: srv.URL, Model: "test-model", APIKey: draftKey, Backoff: time.Millisecond, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	opts.LLM = c
	opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return startDaemon(t, opts), logs
}

// agentsTree is botFiles as agents/bot: a repository that takes another
// agent beside it.
func agentsTree() map[string]string {
	files := map[string]string{}
	for p, c := range botFiles {
		files["agents/bot/"+p] = c
	}
	return files
}

// checkout clones repo's branch and returns the work tree.
func (td *testDaemon) checkout(t *testing.T, repo, branch string) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "clone", "-q", "-b", branch, td.remote+"/"+repo+".git", "w")
	return filepath.Join(dir, "w")
}

func TestSummonProposesABranch(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(llmtest.Reply{Content: summonAnswer})
	srv.Key = draftKey
	defer srv.Close()
	td, logs := draftDaemon(t, srv, daemon.Options{})
	td.push(t, newWorkTree(t, agentsTree()), "hotel")
	mainBefore := git(t, td.repos, "--git-dir=hotel.git", "rev-parse", "main", "live")

	code, _, body := td.raw(t, http.MethodPost, "/v1/agents/ferris/summon", nil, `{"description":"a sarcastic Rust code reviewer"}`)
	if code != http.StatusOK {
		t.Fatalf("summon: %d %s", code, body)
	}
	var res api.ProposalResponse
	if err := json.Unmarshal([]byte(body), &res); err != nil {
		t.Fatal(err)
	}
	if res.Branch != "proposals/ferris/1" || res.Model != "test-model" || len(res.Files) != 4 {
		t.Fatalf("answer %+v", res)
	}
	// The model was asked for the agent, with the description.
	reqs := srv.Requests()
	if len(reqs) != 1 || !strings.Contains(reqs[0].Messages[1].Content, "a sarcastic Rust code reviewer") {
		t.Fatalf("requests %+v", reqs)
	}
	// Nothing reached main or live: a person decides.
	if now := git(t, td.repos, "--git-dir=hotel.git", "rev-parse", "main", "live"); now != mainBefore {
		t.Fatalf("main or live moved:\n%s\n%s", mainBefore, now)
	}
	if _, err := td.c.Prompt(context.Background(), "ferris", api.PromptRequest{}); err == nil {
		t.Fatal("the summoned agent is served before anyone merged it")
	}
	// The branch's tree passes the one check.
	wt := td.checkout(t, "hotel", res.Branch)
	if probs := workspace.Errors(agent.Check(context.Background(), workspace.DirFS(wt), agent.CheckOptions{})); len(probs) != 0 {
		t.Fatalf("the proposal fails the check: %v", probs)
	}
	soul, err := os.ReadFile(filepath.Join(wt, "agents", "ferris", workspace.SoulFile))
	if err != nil || !strings.Contains(string(soul), "dry wit") {
		t.Fatalf("SOUL.md = %q, %v", soul, err)
	}
	// The key is in no answer and no log line.
	if strings.Contains(body, draftKey) || strings.Contains(logs.String(), draftKey) {
		t.Fatal("the key appears in an answer or the log")
	}

	// An agent that exists is not summoned again.
	if code, _, body := td.raw(t, http.MethodPost, "/v1/agents/bot/summon", nil, `{"description":"x"}`); code != http.StatusConflict {
		t.Fatalf("summon an existing agent: %d %s", code, body)
	}
}

func TestSummonRefusesAnInvalidAnswer(t *testing.T) {
	t.Parallel()
	bad := strings.Replace(summonAnswer, "identity:", "policy: sometimes\nidentity:", 1)
	srv := llmtest.New(llmtest.Reply{Content: bad})
	defer srv.Close()
	td, _ := draftDaemon(t, srv, daemon.Options{})
	td.push(t, newWorkTree(t, agentsTree()), "hotel")
	code, _, body := td.raw(t, http.MethodPost, "/v1/agents/ferris/summon", nil, `{"description":"a reviewer"}`)
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, `"invalid"`) || !strings.Contains(body, `policy \"sometimes\" is unknown`) ||
		!strings.Contains(body, "agents/ferris/agent.yaml:1") {
		t.Fatalf("summon with an invalid answer: %d %s", code, body)
	}
	if out, _ := gitMay(td.repos, "--git-dir=hotel.git", "branch", "--list", "proposals/*"); strings.TrimSpace(out) != "" {
		t.Fatalf("a refused answer left a branch: %s", out)
	}
	// A model that fails is 502, naming the endpoint and never the key.
	srv.Script(llmtest.Reply{Status: 503, ErrType: "server_error", ErrMessage: "overloaded, key " + draftKey})
	code, _, body = td.raw(t, http.MethodPost, "/v1/agents/ferris/summon", nil, `{"description":"a reviewer"}`)
	if code != http.StatusBadGateway || !strings.Contains(body, srv.URL) || strings.Contains(body, draftKey) {
		t.Fatalf("summon with a failing model: %d %s", code, body)
	}
}

func TestConsolidateProposesMemory(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(llmtest.Reply{Content: "<file path=\"MEMORY.md\">\n# Memory\n\nThe wifi password is on the fridge.\nAnn prefers oat milk.\n</file>"})
	defer srv.Close()
	td, _ := draftDaemon(t, srv, daemon.Options{})
	td.push(t, newWorkTree(t, botFiles), "bot")
	if code, _, body := td.raw(t, http.MethodPost, "/v1/agents/bot/consolidate", nil, `{}`); code != http.StatusUnprocessableEntity || !strings.Contains(body, "no_change") {
		t.Fatalf("consolidate without recent logs: %d %s", code, body)
	}
	if code, _, body := td.raw(t, http.MethodPost, "/v1/agents/bot/memory/append", nil, `{"text":"Ann prefers oat milk."}`); code != http.StatusOK {
		t.Fatalf("append: %d %s", code, body)
	}
	code, _, body := td.raw(t, http.MethodPost, "/v1/agents/bot/consolidate", nil, `{"days":2}`)
	if code != http.StatusOK {
		t.Fatalf("consolidate: %d %s", code, body)
	}
	var res api.ProposalResponse
	if err := json.Unmarshal([]byte(body), &res); err != nil {
		t.Fatal(err)
	}
	if res.Branch != "proposals/bot/1" || len(res.Files) != 1 || res.Files[0] != workspace.MemoryFile {
		t.Fatalf("answer %+v", res)
	}
	if len(res.Warnings) != 0 {
		t.Fatalf("warnings %v: live's MEMORY.md is main's", res.Warnings)
	}
	if got := srv.Requests()[0].Messages[1].Content; !strings.Contains(got, "Ann prefers oat milk.") || !strings.Contains(got, "on the fridge") {
		t.Fatalf("the model was not sent the log and MEMORY.md:\n%s", got)
	}
	mem := git(t, td.repos, "--git-dir=bot.git", "show", res.Branch+":"+workspace.MemoryFile)
	if !strings.Contains(mem, "oat milk") {
		t.Fatalf("the proposal's MEMORY.md: %q", mem)
	}
	if live := git(t, td.repos, "--git-dir=bot.git", "show", "live:"+workspace.MemoryFile); strings.Contains(live, "oat milk") {
		t.Fatal("the consolidation reached live without a person")
	}

	// A person approves it (the console's approve): it reaches main,
	// and live with it.
	if code, _, body := td.raw(t, http.MethodPost, "/v1/agents/bot/proposals/1/approve", nil, ""); code != http.StatusOK {
		t.Fatalf("approve: %d %s", code, body)
	}
	if main := git(t, td.repos, "--git-dir=bot.git", "show", "main:"+workspace.MemoryFile); !strings.Contains(main, "oat milk") {
		t.Fatalf("main's MEMORY.md after the approval: %q", main)
	}

	// Once the agent wrote MEMORY.md on live, a consolidation says that
	// its merge may conflict.
	_, h, _ := td.raw(t, http.MethodGet, "/v1/agents/bot/files/"+workspace.MemoryFile, nil, "")
	put := http.Header{"If-Match": {h.Get("ETag")}, "Content-Type": {"application/json"}}
	if code, _, body := td.raw(t, http.MethodPut, "/v1/agents/bot/files/"+workspace.MemoryFile, put, `{"content":"# Memory\n\nThe agent's own note.\n"}`); code != http.StatusOK {
		t.Fatalf("write MEMORY.md: %d %s", code, body)
	}
	code, _, body = td.raw(t, http.MethodPost, "/v1/agents/bot/consolidate", nil, `{"days":2}`)
	if code != http.StatusOK || !strings.Contains(body, "proposals/bot/") || !strings.Contains(body, "live-differs") {
		t.Fatalf("consolidate after the agent wrote MEMORY.md: %d %s", code, body)
	}
}

func TestConsolidateOnSchedule(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(llmtest.Reply{Content: "<file path=\"MEMORY.md\">\n# Memory\n\nDistilled.\n</file>"})
	defer srv.Close()
	td, _ := draftDaemon(t, srv, daemon.Options{PruneInterval: 20 * time.Millisecond})
	files := map[string]string{}
	for p, c := range botFiles {
		files[p] = c
	}
	files[workspace.ConfigFile] += "consolidate: {every: 24h, days: 3}\n"
	today := time.Now().In(mustLisbon(t))
	files[workspace.DailyLog(today)] = "## 09:00\n\nSomething happened today.\n"
	td.push(t, newWorkTree(t, files), "bot")
	waitFor(t, "a scheduled consolidation", func() bool {
		out, _ := gitMay(td.repos, "--git-dir=bot.git", "branch", "--list", "proposals/bot/*")
		return strings.TrimSpace(out) != ""
	})
	// Not again before every has passed.
	time.Sleep(100 * time.Millisecond)
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("the model was asked %d times, want once within consolidate.every", n)
	}
}

func mustLisbon(t *testing.T) *time.Location {
	loc, err := time.LoadLocation("Europe/Lisbon")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}
