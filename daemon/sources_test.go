package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/client"
	"github.com/quirehq/quire/internal/testenv"
	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/memstore"
)

// TestDirSource serves a working tree: a saved file is served after the
// watcher's debounce, and an append writes the daily log on disk.
func TestDirSource(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, botFiles)
	td := startDaemon(t, daemon.Options{Dir: dir})
	p, err := td.c.Prompt(ctx, "bot", api.PromptRequest{})
	if err != nil || !strings.Contains(p.Prompt, "MARKER-ONE") {
		t.Fatalf("prompt: %v", err)
	}
	testenv.WriteFiles(t, dir, map[string]string{"SOUL.md": "# Soul\n\nMARKER-TWO\n"})
	waitFor(t, "the saved SOUL.md to be served", func() bool {
		p, err := td.c.Prompt(ctx, "bot", api.PromptRequest{})
		return err == nil && strings.Contains(p.Prompt, "MARKER-TWO")
	})
	w, err := td.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: "Dev mode entry."})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(w.Path)))
	if err != nil || !strings.Contains(string(b), "Dev mode entry.") {
		t.Fatalf("daily log on disk: %q %v", b, err)
	}
}

// TestUpstreamSource follows a plain bare repository by file URL: a
// commit pushed to its main is served after the next poll; writes go to
// its live; a new main is merged into live.
func TestUpstreamSource(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bare := filepath.Join(t.TempDir(), "up.git")
	git(t, t.TempDir(), "init", "-q", "--bare", "-b", "main", bare)
	wt := newWorkTree(t, botFiles)
	git(t, wt, "push", "-q", bare, "main")
	td := startDaemon(t, daemon.Options{Upstream: "file://" + bare, Poll: 100 * time.Millisecond})
	waitFor(t, "the upstream to be deployed", func() bool {
		p, err := td.c.Prompt(ctx, "bot", api.PromptRequest{})
		return err == nil && strings.Contains(p.Prompt, "MARKER-ONE")
	})
	testenv.WriteFiles(t, wt, map[string]string{"SOUL.md": "# Soul\n\nMARKER-UPSTREAM\n"})
	git(t, wt, "commit", "-qam", "upstream change")
	git(t, wt, "push", "-q", bare, "main")
	waitFor(t, "the upstream change to be served", func() bool {
		p, err := td.c.Prompt(ctx, "bot", api.PromptRequest{})
		return err == nil && strings.Contains(p.Prompt, "MARKER-UPSTREAM")
	})
	// A write goes to the upstream's live (created at main), and is
	// acknowledged once the upstream holds it.
	w, err := td.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: "UPSTREAM-APPEND"})
	if err != nil || w.Branch != "live" {
		t.Fatalf("append to an upstream agent: %+v %v", w, err)
	}
	if got := strings.TrimSpace(git(t, bare, "rev-parse", "live")); got != w.Commit {
		t.Fatalf("the upstream's live is %s, want the acknowledged %s", got, w.Commit)
	}
	if log := git(t, bare, "show", "live:"+w.Path); !strings.Contains(log, "UPSTREAM-APPEND") {
		t.Fatalf("the upstream's daily log: %s", log)
	}
	// A new main upstream is merged into live by the daemon and served,
	// with the agent's write kept.
	testenv.WriteFiles(t, wt, map[string]string{"SOUL.md": "# Soul\n\nMARKER-SECOND\n"})
	git(t, wt, "commit", "-qam", "second upstream change")
	git(t, wt, "push", "-q", bare, "main")
	waitFor(t, "main to be merged into the upstream's live and served", func() bool {
		p, err := td.c.Prompt(ctx, "bot", api.PromptRequest{})
		return err == nil && strings.Contains(p.Prompt, "MARKER-SECOND")
	})
	if log := git(t, bare, "show", "live:"+w.Path); !strings.Contains(log, "UPSTREAM-APPEND") {
		t.Fatalf("the merge lost the agent's write: %s", log)
	}
	if parents := strings.Fields(git(t, bare, "log", "-1", "--format=%P", "live")); len(parents) != 2 {
		t.Fatalf("live is not a merge of main: parents %v", parents)
	}
}

// TestPruneDailyLogs deletes daily logs past the retention an agent
// sets in one commit, announced on the event stream.
func TestPruneDailyLogs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	td := startDaemon(t, daemon.Options{PruneInterval: 50 * time.Millisecond})
	evCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := td.subscribe(t, evCtx)
	files := maps.Clone(botFiles)
	files["agent.yaml"] += "daily_log_retention_days: 30\n"
	wt := newWorkTree(t, files)
	if out := td.push(t, wt, "bot"); !strings.Contains(out, "bot: daily logs: 1 older than 30 days (daily_log_retention_days) will be pruned within the hour: memory/2020-01-01.md") {
		t.Errorf("the deploy report does not announce the prune:\n%s", out)
	}
	waitFor(t, "the old daily log to be pruned", func() bool {
		_, err := td.c.ReadFile(ctx, "bot", "memory/2020-01-01.md", "")
		return apiStatus(err) == http.StatusNotFound
	})
	git(t, wt, "pull", "-q", td.remote+"/bot.git", "live")
	if log := git(t, wt, "log", "-1", "--format=%an %s"); !strings.Contains(log, "bot bot: prune daily logs older than 30 days") {
		t.Fatalf("prune commit: %s", log)
	}
	if _, err := os.Stat(filepath.Join(wt, "MEMORY.md")); err != nil {
		t.Fatal("pruning removed MEMORY.md")
	}
	timeout := time.After(5 * time.Second)
	for {
		select {
		case e, ok := <-events:
			switch {
			case !ok:
				t.Fatal("the event stream ended without a prune event")
			case e.Type != "prune":
				continue
			case e.Agent != "bot" || !strings.Contains(e.Message, "memory/2020-01-01.md") || !strings.Contains(e.Message, "older than 30 days"):
				t.Errorf("prune event %+v; want the agent, the file and the retention", e)
			}
			return
		case <-timeout:
			t.Fatal("no prune event on the event stream")
		}
	}
}

// TestImportedLogsSurviveStart: an agent that sets no retention keeps
// its old daily logs (imported history) however often the daemon prunes.
func TestImportedLogsSurviveStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	td := startDaemon(t, daemon.Options{PruneInterval: 20 * time.Millisecond})
	wt := newWorkTree(t, botFiles)
	td.push(t, wt, "bot")
	time.Sleep(500 * time.Millisecond) // many prune rounds
	if _, err := td.c.ReadFile(ctx, "bot", "memory/2020-01-01.md", ""); err != nil {
		t.Fatalf("the 2020 daily log is gone after start: %v", err)
	}
}

// TestShutdownWithEventStream: an open event stream does not hold up a
// graceful shutdown, and the socket file is removed.
func TestShutdownWithEventStream(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, daemon.Options{})
	events := td.subscribe(t, context.Background())
	streamDone := make(chan struct{})
	go func() {
		for range events {
		}
		close(streamDone)
	}()
	start := time.Now()
	td.stop()
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("shutdown took %v", d)
	}
	select {
	case <-streamDone:
	case <-time.After(5 * time.Second):
		t.Fatal("the event stream did not end")
	}
	if _, err := os.Stat(td.c.Socket); !os.IsNotExist(err) {
		t.Fatalf("socket left behind: %v", err)
	}
}

// TestGitAuth: with tokens, the git endpoint refuses anonymous pushes
// and deploys authenticated ones.
func TestGitAuth(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, daemon.Options{GitTokens: []daemon.GitToken{{User: "ann", Token: "s3cret"}}})
	wt := newWorkTree(t, botFiles)
	if out, err := gitMay(wt, "push", td.remote+"/bot.git", "main"); err == nil {
		t.Fatalf("anonymous push accepted:\n%s", out)
	}
	authed := strings.Replace(td.remote, "http://", "http://ann:s3cret@", 1)
	if out := git(t, wt, "push", authed+"/bot.git", "main"); !strings.Contains(out, "bot: deployed") {
		t.Fatalf("authenticated push:\n%s", out)
	}
	if out, err := gitMay(t.TempDir(), "clone", td.remote+"/bot.git", "anon"); err == nil {
		t.Fatalf("anonymous clone accepted:\n%s", out)
	}
	if out, err := gitMay(t.TempDir(), "clone", strings.Replace(td.remote, "http://", "http://bob:s3cret@", 1)+"/bot.git", "x"); err == nil {
		t.Fatalf("clone with another user's token accepted:\n%s", out)
	}
}

// TestGitTokenScopes: a token scoped to some repositories cannot read or
// push others.
func TestGitTokenScopes(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, daemon.Options{GitTokens: []daemon.GitToken{
		{Token: "owner-token"}, {Token: "ci-token", Repos: []string{"docs"}},
	}})
	wt := newWorkTree(t, botFiles)
	owner := strings.Replace(td.remote, "http://", "http://x:owner-token@", 1)
	git(t, wt, "push", owner+"/bot.git", "main")
	ci := strings.Replace(td.remote, "http://", "http://x:ci-token@", 1)
	if out, err := gitMay(t.TempDir(), "clone", ci+"/bot.git", "x"); err == nil || !strings.Contains(out, "403") {
		t.Fatalf("a token scoped to docs cloned bot: %v\n%s", err, out)
	}
	if out, err := gitMay(wt, "push", ci+"/bot.git", "main"); err == nil {
		t.Fatalf("a token scoped to docs pushed to bot:\n%s", out)
	}
	git(t, t.TempDir(), "clone", owner+"/bot.git", "x")
}

// TestHostAndOriginGuard: the git endpoint and the TCP API answer only
// their own address (or localhost, or a configured name), and never a
// request that a web page made (Origin or Referer).
func TestHostAndOriginGuard(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, daemon.Options{APIListen: "127.0.0.1:0", Tokens: api.Tokens{"tok": {"*"}}, AllowedHosts: []string{"quire.internal"}})
	git(t, newWorkTree(t, botFiles), "push", td.remote+"/bot.git", "main")
	_, gitPort, _ := net.SplitHostPort(strings.TrimPrefix(td.remote, "http://"))
	_, apiPort, _ := net.SplitHostPort(td.d.APIAddr())
	for _, tc := range []struct {
		url, host string
		header    [2]string
		want      int
	}{
		{td.remote + "/bot.git/info/refs?service=git-upload-pack", "", [2]string{}, http.StatusOK},
		{td.remote + "/bot.git/info/refs?service=git-upload-pack", "localhost:" + gitPort, [2]string{}, http.StatusOK},
		{td.remote + "/bot.git/info/refs?service=git-upload-pack", "quire.internal", [2]string{}, http.StatusOK},
		{td.remote + "/bot.git/info/refs?service=git-upload-pack", "evil.example:" + gitPort, [2]string{}, http.StatusMisdirectedRequest},
		{td.remote + "/bot.git/info/refs?service=git-upload-pack", "", [2]string{"Origin", "http://evil.example"}, http.StatusForbidden},
		{"http://" + td.d.APIAddr() + "/v1/status", "", [2]string{}, http.StatusOK},
		{"http://" + td.d.APIAddr() + "/v1/status", "rebound.example:" + apiPort, [2]string{}, http.StatusMisdirectedRequest},
		{"http://" + td.d.APIAddr() + "/v1/status", "", [2]string{"Referer", "http://evil.example/page"}, http.StatusForbidden},
	} {
		req, err := http.NewRequest("GET", tc.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer tok")
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.header[0] != "" {
			req.Header.Set(tc.header[0], tc.header[1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("GET %s Host %q %v: %d, want %d", tc.url, tc.host, tc.header, resp.StatusCode, tc.want)
		}
	}
}

// TestDirSymlinkEscape: in dev mode a symbolic link cannot carry a write
// out of the working tree.
func TestDirSymlinkEscape(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	outside := t.TempDir()
	testenv.WriteFiles(t, dir, botFiles)
	if err := os.Symlink(outside, filepath.Join(dir, "memory", "notes")); err != nil {
		t.Fatal(err)
	}
	td := startDaemon(t, daemon.Options{Dir: dir})
	_, err := td.c.WriteFile(ctx, "bot", "memory/notes/x.md", "", "*", []byte("escaped"))
	if err == nil {
		t.Fatal("a write followed a symbolic link out of the tree")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("files written outside: %v", entries)
	}
	// A context file that is a link out of the tree is not read: the
	// prompt says which file, with a code of its own (not "internal").
	os.Remove(filepath.Join(dir, "TOOLS.md"))
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "TOOLS.md")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the link to be seen", func() bool {
		_, err := td.c.Prompt(ctx, "bot", api.PromptRequest{})
		var e *api.Error
		return errors.As(err, &e) && e.Code == api.CodeUnreadable && strings.Contains(e.Message, "TOOLS.md") &&
			strings.Contains(e.Message, "symbolic link") && !strings.Contains(e.Message, "root:")
	})
}

// flakyEmbedder fails while down is set and counts the texts it embeds.
type flakyEmbedder struct {
	memory.Builtin
	down     atomic.Bool
	embedded atomic.Int64
}

func (e *flakyEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if e.down.Load() {
		return nil, errors.New("embedding endpoint unreachable")
	}
	e.embedded.Add(int64(len(texts)))
	return e.Builtin.Embed(ctx, texts)
}

// TestEmbedderBackfill: chunks indexed while the embedder fails get their
// vectors once it is back.
func TestEmbedderBackfill(t *testing.T) {
	t.Parallel()
	emb := &flakyEmbedder{}
	emb.down.Store(true)
	store, err := memstore.New(memstore.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	td := startDaemon(t, daemon.Options{Store: store, Embedder: emb})
	wt := newWorkTree(t, botFiles)
	td.push(t, wt, "bot")
	ctx := context.Background()
	waitFor(t, "full-text search while the embedder is down", func() bool {
		res, err := td.c.MemorySearch(ctx, "bot", api.SearchRequest{Query: "wifi password"})
		return err == nil && len(res.Hits) > 0
	})
	emb.down.Store(false)
	waitFor(t, "the backfill to embed the chunks", func() bool { return emb.embedded.Load() >= 2 })
}

// TestPushRefusals: each kind of invalid tree is refused, the refusal
// names the file, and the served prompt does not change.
func TestPushRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	td := startDaemon(t, daemon.Options{})
	wt := newWorkTree(t, botFiles)
	td.push(t, wt, "bot")
	before, err := td.c.Prompt(ctx, "bot", api.PromptRequest{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"reject policy over budget", map[string]string{
			"agent.yaml": "name: bot\npolicy: reject\nbudget:\n  per_file: 100\n",
			"SOUL.md":    strings.Repeat("Too long a soul. ", 20),
		}, "SOUL.md"},
		{"bad SKILL.md", map[string]string{"skills/broken/SKILL.md": "---\nname: [unclosed\n---\nbody\n"}, "skills/broken/SKILL.md"},
		{"bad agent.yaml", map[string]string{"agent.yaml": "name: bot\ncolour: blue\n"}, "agent.yaml"},
		{"not UTF-8", map[string]string{"MEMORY.md": "caf\xe9\n"}, "MEMORY.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testenv.WriteFiles(t, wt, tt.files)
			git(t, wt, "add", "-A")
			git(t, wt, "commit", "-qm", tt.name)
			defer git(t, wt, "reset", "-q", "--hard", "HEAD~1")
			out, err := gitMay(wt, "push", td.remote+"/bot.git", "main")
			if err == nil || !strings.Contains(out, "remote rejected") || !strings.Contains(out, tt.want) {
				t.Fatalf("push not refused naming %s: %v\n%s", tt.want, err, out)
			}
			after, err := td.c.Prompt(ctx, "bot", api.PromptRequest{})
			if err != nil || after.Commit != before.Commit || after.Prompt != before.Prompt {
				t.Fatal("a refused push changed the served prompt")
			}
		})
	}
	// Another branch is stored, not deployed, and the pusher is told.
	git(t, wt, "checkout", "-q", "-b", "draft")
	testenv.WriteFiles(t, wt, map[string]string{"SOUL.md": "# Soul\n\nDRAFT\n"})
	git(t, wt, "commit", "-qam", "draft")
	out := git(t, wt, "push", td.remote+"/bot.git", "draft")
	if !strings.Contains(out, "draft is stored but not deployed: push to main") {
		t.Fatalf("push of another branch:\n%s", out)
	}
	if after, _ := td.c.Prompt(ctx, "bot", api.PromptRequest{}); after.Commit != before.Commit {
		t.Fatal("a push to another branch was deployed")
	}
}

// TestClientZeroValue: a zero client finds the daemon on the default
// socket.
func TestClientZeroValue(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", shortTempDir(t))
	td := startDaemon(t, daemon.Options{Socket: api.DefaultSocket(os.Getenv)})
	td.push(t, newWorkTree(t, botFiles), "bot")
	var c client.Client
	agents, err := c.Agents(context.Background())
	if err != nil || len(agents) != 1 || agents[0].Name != "bot" {
		t.Fatalf("zero client: %+v %v", agents, err)
	}
}

// TestConcurrentWritesAndPushes: memory appends from many clients while
// a person pushes changes lose nothing: every append is in the daily log
// and in the history, and every push that was accepted is too.
func TestConcurrentWritesAndPushes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	td := startDaemon(t, daemon.Options{Now: func() time.Time { return time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC) }})
	wt := newWorkTree(t, botFiles)
	td.push(t, wt, "bot")
	const writers, each = 8, 5
	errs := make(chan error, writers*each)
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				_, err := td.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: fmt.Sprintf("entry-%d-%d", w, i)})
				errs <- err
			}
		}(w)
	}
	pushed := 0
	for i := 0; i < 5; i++ {
		testenv.WriteFiles(t, wt, map[string]string{"TOOLS.md": fmt.Sprintf("# Tools\n\nrev %d\n", i)})
		git(t, wt, "commit", "-qam", fmt.Sprintf("tools %d", i))
		for attempt := 0; attempt < 20; attempt++ {
			if _, err := gitMay(wt, "push", td.remote+"/bot.git", "main"); err == nil {
				pushed++
				break
			}
			git(t, wt, "pull", "-q", "--no-rebase", "--no-edit", td.remote+"/bot.git", "main")
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("append: %v", err)
		}
	}
	if pushed != 5 {
		t.Fatalf("%d of 5 pushes got through", pushed)
	}
	f, err := td.c.ReadFile(ctx, "bot", "memory/2026-11-22.md", "")
	if err != nil {
		t.Fatal(err)
	}
	for w := 0; w < writers; w++ {
		for i := 0; i < each; i++ {
			if !strings.Contains(f.Content, fmt.Sprintf("entry-%d-%d\n", w, i)) {
				t.Errorf("entry-%d-%d lost", w, i)
			}
		}
	}
	git(t, wt, "pull", "-q", "--no-rebase", "--no-edit", td.remote+"/bot.git", "live")
	if n := strings.Count(git(t, wt, "log", "--format=%B", "--author=bot"), "memory entry"); n != writers*each {
		t.Errorf("%d appends recorded in the history's commit messages, want %d", n, writers*each)
	}
	if tools, _ := os.ReadFile(filepath.Join(wt, "TOOLS.md")); !strings.Contains(string(tools), "rev 4") {
		t.Errorf("the last push is lost: %s", tools)
	}
	p, err := td.c.Prompt(ctx, "bot", api.PromptRequest{Session: "subagent"})
	if err != nil || !strings.Contains(p.Prompt, "rev 4") {
		t.Fatalf("served prompt lacks the last push: %v", err)
	}
}

// TestAgentNameTakenByAnotherRepository: a push of a second repository
// that defines an agent another repository already serves is refused,
// naming both places, and takes nothing over; the status shows the
// refused push. A daemon that finds two repositories defining one agent
// at start (one written by file path) does not start, naming both.
func TestAgentNameTakenByAnotherRepository(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	td := startDaemon(t, daemon.Options{})
	td.push(t, newWorkTree(t, botFiles), "solo")
	intruder := map[string]string{}
	for k, v := range botFiles {
		intruder[k] = v
	}
	intruder["SOUL.md"] = "# Soul\n\nINTRUDER\n"
	intruder["MEMORY.md"] = "# Memory\n\nThe intruder's memory.\n"
	iwt := newWorkTree(t, intruder)
	out, err := gitMay(iwt, "push", td.remote+"/other.git", "main")
	if err == nil || !strings.Contains(out, `agent.yaml: agent "bot" is already defined by repo:solo`) || !strings.Contains(out, "[remote rejected] main -> main") {
		t.Fatalf("a push defining another repository's agent was not refused naming both:\n%s", out)
	}
	p, err := td.c.Prompt(ctx, "bot", api.PromptRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(p.Prompt, "INTRUDER") || !strings.Contains(p.Prompt, "MARKER-ONE") {
		t.Fatalf("the second repository took the agent over; push said:\n%s", out)
	}
	st, err := td.c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	refused := false
	for _, ps := range st.Pushes {
		if ps.Repo == "other" && strings.Contains(ps.Result+fmt.Sprint(ps.Refs), "already defined by repo:solo") {
			refused = true
		}
	}
	if !refused {
		t.Errorf("status does not show the refused push: %+v", st.Pushes)
	}
	res, err := td.c.MemorySearch(ctx, "bot", api.SearchRequest{Query: "intruder memory"})
	if err == nil && len(res.Hits) > 0 && strings.Contains(res.Hits[0].Text, "intruder") {
		t.Fatalf("the intruder's memory is indexed for bot: %+v", res.Hits)
	}

	// The same name in two repositories on disk: no start.
	td.stop()
	other := filepath.Join(td.repos, "other.git")
	git(t, td.repos, "init", "-q", "--bare", "-b", "main", other)
	git(t, iwt, "push", "-q", other, "main")
	_, err = daemon.New(ctx, daemon.Options{ReposDir: td.repos, GitListen: "127.0.0.1:0",
		Socket: filepath.Join(shortTempDir(t), "q.sock"), CacheDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), `agent "bot" is already defined by repo:`) ||
		!strings.Contains(err.Error(), "repo:other") || !strings.Contains(err.Error(), "repo:solo") {
		t.Fatalf("a start with two repositories defining bot: %v, want a refusal naming both", err)
	}
}
