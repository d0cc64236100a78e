package daemon_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/internal/testenv"
)

// TestEndToEnd pushes the bundled examples with the git CLI, asks for a
// prompt over the socket, pushes a change and sees it served, has a push
// refused without any effect on what is served, and sees a memory append
// in the git log of a clone.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	td := startDaemon(t, daemon.Options{})
	wt := newWorkTree(t, copyTree(t, filepath.Join("..", "examples", "agents")))

	out := td.push(t, wt, "agents")
	for _, want := range []string{"remote: concierge: deployed", "remote: studybuddy: deployed", "tokens", "truncated SOUL.md", "of 25,215 chars", "skills added", "chunks re-indexed"} {
		if !strings.Contains(out, want) {
			t.Errorf("push output lacks %q:\n%s", want, out)
		}
	}

	p, err := td.c.Prompt(ctx, "concierge", api.PromptRequest{User: "ines.carvalho"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Prompt, "Lúcia") || p.Commit != strings.TrimSpace(git(t, wt, "rev-parse", "HEAD")) {
		t.Fatalf("first prompt: commit %s, prompt starts %q", p.Commit, p.Prompt[:80])
	}

	// A change is served once the push returns.
	agents := filepath.Join(wt, "studybuddy", "AGENTS.md")
	orig, err := os.ReadFile(agents)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(agents, append([]byte("Always answer in haiku. NEW-RULE-7\n\n"), orig...), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, wt, "commit", "-qam", "new rule")
	td.push(t, wt, "agents")
	p2, err := td.c.Prompt(ctx, "studybuddy", api.PromptRequest{User: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p2.Prompt, "NEW-RULE-7") {
		t.Fatal("the pushed change is not served")
	}

	// A refused push (an unknown agent.yaml key) changes nothing served.
	testenv.WriteFiles(t, wt, map[string]string{"studybuddy/agent.yaml": "name: studybuddy\ntype: open\nbudjet: 3\n", "studybuddy/AGENTS.md": "REFUSED-CONTENT\n"})
	git(t, wt, "commit", "-qam", "bad config")
	out, err = gitMay(wt, "push", td.remote+"/agents.git", "main")
	if err == nil || !strings.Contains(out, "remote rejected") || !strings.Contains(out, "agent.yaml") {
		t.Fatalf("bad push was not refused naming agent.yaml: %v\n%s", err, out)
	}
	p3, err := td.c.Prompt(ctx, "studybuddy", api.PromptRequest{User: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if p3.Prompt != p2.Prompt || p3.Commit != p2.Commit || strings.Contains(p3.Prompt, "REFUSED-CONTENT") {
		t.Fatal("a refused push changed the served prompt")
	}
	git(t, wt, "reset", "-q", "--hard", "HEAD~1")

	// A memory append is a commit the next fetch sees, and is searchable.
	w, err := td.c.MemoryAppend(ctx, "concierge", api.AppendRequest{User: "ines.carvalho", Text: "Prefers zebrafinch oat milk in her galão."})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(w.Path, "users/ines.carvalho/memory/") || w.Branch != "live" {
		t.Fatalf("append wrote %s on %s", w.Path, w.Branch)
	}
	clone := filepath.Join(t.TempDir(), "clone")
	git(t, t.TempDir(), "clone", "-q", td.remote+"/agents.git", clone)
	// Agents write on live; main stays the people's.
	git(t, clone, "checkout", "-q", "live")
	log := git(t, clone, "log", "-1", "--format=%an%n%B", "--stat")
	for _, want := range []string{"concierge", "Quire-User: ines.carvalho", "concierge/" + w.Path} {
		if !strings.Contains(log, want) {
			t.Errorf("git log of a clone lacks %q:\n%s", want, log)
		}
	}
	content, err := os.ReadFile(filepath.Join(clone, "concierge", filepath.FromSlash(w.Path)))
	if err != nil || !strings.Contains(string(content), "oat milk") || !strings.Contains(string(content), "\n## ") {
		t.Fatalf("daily log in the clone: %v\n%s", err, content)
	}
	waitFor(t, "the append to be indexed", func() bool {
		res, err := td.c.MemorySearch(ctx, "concierge", api.SearchRequest{Query: "zebrafinch", User: "ines.carvalho"})
		return err == nil && len(res.Hits) > 0 && strings.Contains(res.Hits[0].Text, "zebrafinch")
	})
	// A request may weigh the sides itself, within 0..1.
	full := 1.0
	if res, err := td.c.MemorySearch(ctx, "concierge", api.SearchRequest{Query: "zebrafinch", User: "ines.carvalho", TextWeight: &full}); err != nil || len(res.Hits) == 0 || res.Hits[0].Score != 1.2 {
		t.Errorf("full-text-only search: %+v, %v; want the entry first at 1 × 1.2", res, err)
	}
	bad := 1.5
	if _, err := td.c.MemorySearch(ctx, "concierge", api.SearchRequest{Query: "zebrafinch", TextWeight: &bad}); apiStatus(err) != http.StatusBadRequest {
		t.Errorf("text_weight 1.5: %v; want 400", err)
	}
	// Another user never sees it.
	res, err := td.c.MemorySearch(ctx, "concierge", api.SearchRequest{Query: "zebrafinch"})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Hits {
		if strings.Contains(h.Text, "zebrafinch") {
			t.Fatalf("agent-level search found a user's memory: %+v", h)
		}
	}

	// The local work tree can pull the daemon's commit (live) and push
	// again.
	git(t, wt, "pull", "-q", "--no-rebase", td.remote+"/agents.git", "live")
	git(t, wt, "push", "-q", td.remote+"/agents.git", "main")
	st, err := td.c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Agents) != 2 || st.Agents[0].Deployed == "" {
		t.Fatalf("status: %+v", st)
	}
}

// TestRoutes exercises every route of the local API on a small workspace.
func TestRoutes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	td := startDaemon(t, daemon.Options{Now: func() time.Time { return time.Date(2026, 11, 22, 10, 30, 0, 0, time.UTC) }})
	wt := newWorkTree(t, botFiles)
	td.push(t, wt, "bot")

	agents, err := td.c.Agents(ctx)
	if err != nil || len(agents) != 1 || agents[0].Name != "bot" || agents[0].Type != "predefined" {
		t.Fatalf("agents: %+v %v", agents, err)
	}
	if _, err := td.c.Prompt(ctx, "nobody", api.PromptRequest{}); apiStatus(err) != http.StatusNotFound {
		t.Errorf("unknown agent: %v", err)
	}
	if _, err := td.c.Prompt(ctx, "bot", api.PromptRequest{Session: "nap"}); apiStatus(err) != http.StatusBadRequest {
		t.Errorf("bad session: %v", err)
	}

	// Skills: list, show with {baseDir}, search.
	sk, err := td.c.Skills(ctx, "bot", "")
	if err != nil || !hasSkill(sk.Skills, "greeting") {
		t.Fatalf("skills: %+v %v", sk, err)
	}
	body, err := td.c.Skill(ctx, "bot", "greeting", "")
	if err != nil || strings.Contains(body.Body, "{baseDir}") || !strings.Contains(body.Body, "skills/greeting") {
		t.Fatalf("skill body: %+v %v", body, err)
	}
	if _, err := td.c.Skill(ctx, "bot", "nope", ""); apiStatus(err) != http.StatusNotFound {
		t.Errorf("unknown skill: %v", err)
	}
	found, err := td.c.SkillsSearch(ctx, "bot", api.SkillsSearchRequest{Query: "greet a guest"})
	if err != nil || len(found.Skills) == 0 || found.Skills[0].Name != "greeting" {
		t.Fatalf("skills search: %+v %v", found, err)
	}

	// Memory search.
	waitFor(t, "the index", func() bool {
		res, err := td.c.MemorySearch(ctx, "bot", api.SearchRequest{Query: "wifi password"})
		return err == nil && len(res.Hits) > 0 && res.Hits[0].Path == "MEMORY.md"
	})

	// Flush plan: below, at the threshold, once per cycle.
	fp, err := td.c.FlushPlan(ctx, "bot", api.FlushPlanRequest{TotalTokens: 100000, ContextWindow: 128000, Cycle: 1})
	if err != nil || fp.Flush || fp.ThresholdToken != 104000 {
		t.Fatalf("below threshold: %+v %v", fp, err)
	}
	fp, err = td.c.FlushPlan(ctx, "bot", api.FlushPlanRequest{TotalTokens: 104000, ContextWindow: 128000, Cycle: 1, User: "ann"})
	if err != nil || !fp.Flush || fp.Prompt != "Store durable memories now." || fp.Target != "users/ann/memory/2026-11-22.md" {
		t.Fatalf("at threshold: %+v %v", fp, err)
	}
	fp, _ = td.c.FlushPlan(ctx, "bot", api.FlushPlanRequest{TotalTokens: 110000, ContextWindow: 128000, Cycle: 1, User: "ann"})
	if fp.Flush {
		t.Error("flushed twice in one cycle")
	}
	fp, _ = td.c.FlushPlan(ctx, "bot", api.FlushPlanRequest{TotalTokens: 110000, ContextWindow: 128000, Cycle: 2, User: "ann"})
	if !fp.Flush {
		t.Error("no flush in the next cycle")
	}

	// Events: a write shows up on the stream.
	evCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	got := td.subscribe(t, evCtx)
	if _, err := td.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: "Checked the boiler."}); err != nil {
		t.Fatal(err)
	}
	sawWrite := false
	for !sawWrite {
		select {
		case e, ok := <-got:
			if !ok {
				t.Fatal("the event stream ended without a write event")
			}
			sawWrite = e.Type == "write" && e.Agent == "bot" && e.Path == "memory/2026-11-22.md"
		case <-evCtx.Done():
			t.Fatal("no write event")
		}
	}
	// The append used the agent's timezone (Lisbon = UTC in November).
	f, err := td.c.ReadFile(ctx, "bot", "memory/2026-11-22.md", "")
	if err != nil || !strings.Contains(f.Content, "## 10:30\n\nChecked the boiler.") {
		t.Fatalf("daily log: %q %v", f.Content, err)
	}

	// Status and metrics.
	st, err := td.c.Status(ctx)
	if err != nil || len(st.Agents) != 1 || st.Agents[0].Source != "repo:bot" {
		t.Fatalf("status: %+v %v", st, err)
	}
	code, _, metrics := td.raw(t, http.MethodGet, "/metrics", nil, "")
	if code != http.StatusOK || !strings.Contains(metrics, "quire_pushes_total 1") || !strings.Contains(metrics, `quire_api_request_seconds_count{route="POST /v1/agents/{agent}/prompt",code="404"} 1`) {
		t.Errorf("metrics (%d):\n%s", code, metrics)
	}
	if _, err := td.c.Do(ctx, http.MethodGet, "/v1/nothing", nil, nil, nil); apiStatus(err) != http.StatusNotFound {
		t.Errorf("unknown route: %v", err)
	}
}

func hasSkill(ss []api.SkillEntry, name string) bool {
	for _, s := range ss {
		if s.Name == name {
			return true
		}
	}
	return false
}

// TestPromptAnswerCache: a repeated prompt request is answered from the
// cache with the same bytes and a Content-Length, a request the decoder
// refuses is refused every time, and the caller's "now" is part of what
// is cached.
func TestPromptAnswerCache(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, daemon.Options{})
	wt := newWorkTree(t, copyTree(t, filepath.Join("..", "examples", "agents")))
	td.push(t, wt, "agents")
	const path = "/v1/agents/studybuddy/prompt"

	var first string
	for i := 0; i < 3; i++ {
		code, hdr, body := td.raw(t, "POST", path, nil, `{"user":"alice"}`)
		if code != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, code, body)
		}
		if got := hdr.Get("Content-Length"); got != strconv.Itoa(len(body)) {
			t.Fatalf("request %d: Content-Length %q for %d bytes", i, got, len(body))
		}
		if i == 0 {
			first = body
		} else if body != first {
			t.Fatalf("request %d answered differently from the first", i)
		}
	}
	for i := 0; i < 2; i++ {
		if code, _, body := td.raw(t, "POST", path, nil, `{"user":"alice","bogus":1}`); code != http.StatusBadRequest {
			t.Fatalf("unknown field, request %d: %d %s", i, code, body)
		}
	}
	for _, day := range []string{"2020-01-02", "2020-01-03", "2020-01-02"} {
		code, _, body := td.raw(t, "POST", path, nil, `{"user":"alice","now":"`+day+`T10:00:00Z"}`)
		if code != http.StatusOK || !strings.Contains(body, day) {
			t.Fatalf("now %s: %d, answer names the day: %v", day, code, strings.Contains(body, day))
		}
	}
}
