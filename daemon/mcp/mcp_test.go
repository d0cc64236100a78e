package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/client"
	"github.com/quirehq/quire/daemon/mcp"
	"github.com/quirehq/quire/internal/testenv"
	"github.com/quirehq/quire/prompt"
)

// hit mirrors a memory_search hit.
type hit struct {
	Path      string  `json:"path"`
	Scope     string  `json:"scope"`
	StartLine int     `json:"start_line"`
	EndLine   int     `json:"end_line"`
	Date      string  `json:"date"`
	Score     float64 `json:"score"`
	Text      string  `json:"text"`
}

// TestEveryToolOverTheSocket drives every tool, the prompt and a resource
// over streamable HTTP on the daemon's unix socket.
func TestEveryToolOverTheSocket(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	td := startDaemon(t, daemon.Options{})
	td.deploy(t, "alpha", "alpha", alphaFiles)
	cs := mustConnect(t, socketHTTP(td.socket), "http://quire/mcp?agent=alpha&user=alice", nil)

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		schema, _ := json.Marshal(tool.InputSchema)
		if !strings.Contains(string(schema), `"type":"object"`) || !strings.Contains(string(schema), `"description"`) {
			t.Errorf("%s: input schema %s has no described properties", tool.Name, schema)
		}
		if !strings.Contains(tool.Description, "alpha") || len(tool.Description) < 80 {
			t.Errorf("%s: description %q does not tell a model what it does for agent alpha", tool.Name, tool.Description)
		}
	}
	sort.Strings(names)
	if want := "memory_append memory_get memory_search memory_write skill_get skill_search"; strings.Join(names, " ") != want {
		t.Fatalf("tools = %v, want %s", names, want)
	}

	var found struct {
		Hits   []hit  `json:"hits"`
		Commit string `json:"commit"`
	}
	callOK(t, cs, "memory_search", map[string]any{"query": "what does alice drink in the morning", "limit": 3}, &found)
	if len(found.Hits) == 0 || !strings.Contains(found.Hits[0].Text, "ALICE-MARK") || found.Hits[0].Scope != "user" || found.Hits[0].Path != "MEMORY.md" {
		t.Fatalf("memory_search hits = %+v, want alice's MEMORY.md first", found.Hits)
	}
	callOK(t, cs, "memory_search", map[string]any{"query": "boiler serviced"}, &found)
	if len(found.Hits) == 0 || found.Hits[0].Date != "2020-01-01" || found.Hits[0].StartLine < 1 {
		t.Fatalf("memory_search of a daily log = %+v, want the date 2020-01-01 and lines", found.Hits)
	}

	var got struct {
		Path, Scope, Text, ETag string
		From, To                int
		TotalLines              int `json:"total_lines"`
	}
	callOK(t, cs, "memory_get", map[string]any{"path": "MEMORY.md"}, &got)
	if got.Scope != "user" || !strings.Contains(got.Text, "ALICE-MARK") || got.ETag == "" {
		t.Fatalf("memory_get MEMORY.md = %+v, want alice's copy with an etag", got)
	}
	callOK(t, cs, "memory_get", map[string]any{"path": "MEMORY.md", "scope": "agent", "from": 3, "lines": 1}, &got)
	if got.Scope != "agent" || got.Text != "The wifi password is on the fridge. ALPHA-SECRET\n" || got.From != 3 || got.To != 3 {
		t.Fatalf("memory_get agent MEMORY.md line 3 = %+v", got)
	}
	agentETag := got.ETag

	var wrote api.WriteResponse
	callOK(t, cs, "memory_append", map[string]any{"text": "Alice asked for oat milk. APPEND-MARK"}, &wrote)
	if !strings.HasPrefix(wrote.Path, "users/alice/memory/") || wrote.Commit == "" {
		t.Fatalf("memory_append = %+v, want a commit in alice's daily log", wrote)
	}
	callOK(t, cs, "memory_write", map[string]any{"path": "MEMORY.md", "scope": "agent", "if_match": agentETag,
		"content": "# Memory\n\nThe wifi password changed. ALPHA-SECRET\n"}, &wrote)
	if wrote.Path != "MEMORY.md" || wrote.ETag == "" {
		t.Fatalf("memory_write = %+v", wrote)
	}
	f, err := td.c.ReadFile(ctx, "alpha", "MEMORY.md", "")
	if err != nil || !strings.Contains(f.Content, "password changed") {
		t.Fatalf("after memory_write the API reads %q (%v)", f.Content, err)
	}

	// A persona file becomes a proposal; the deployed SOUL.md stays.
	soul, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "quire://alpha/SOUL.md"})
	if err != nil {
		t.Fatal(err)
	}
	callOK(t, cs, "memory_write", map[string]any{"path": "SOUL.md", "scope": "agent", "if_match": soul.Contents[0].Meta["etag"],
		"content": "# Soul\n\nLoud. PROPOSED\n"}, &wrote)
	if !strings.HasPrefix(wrote.Branch, "proposals/alpha/") {
		t.Fatalf("memory_write SOUL.md = %+v, want a proposal branch", wrote)
	}
	if f, err := td.c.ReadFile(ctx, "alpha", "SOUL.md", ""); err != nil || f.Content != alphaFiles["SOUL.md"] {
		t.Fatalf("the deployed SOUL.md changed: %q, %v", f.Content, err)
	}

	var skills api.SkillsResponse
	callOK(t, cs, "skill_search", map[string]any{"query": "greet a guest"}, &skills)
	if len(skills.Skills) == 0 || skills.Skills[0].Name != "greeting" {
		t.Fatalf("skill_search = %+v", skills)
	}
	var body api.SkillBody
	callOK(t, cs, "skill_get", map[string]any{"name": "greeting"}, &body)
	viaAPI, err := td.c.Skill(ctx, "alpha", "greeting", "alice")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(body.Body, "{baseDir}") || body.Body != viaAPI.Body {
		t.Fatalf("skill_get body %q: want {baseDir} resolved as the API does: %q", body.Body, viaAPI.Body)
	}

	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "quire://alpha/SOUL.md"})
	if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != alphaFiles["SOUL.md"] {
		t.Fatalf("read quire://alpha/SOUL.md = %+v, %v", res, err)
	}
	res, err = cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "quire://alpha/users/alice/USER.md"})
	if err != nil || res.Contents[0].Text != alphaFiles["users/alice/USER.md"] {
		t.Fatalf("read alice's USER.md = %+v, %v", res, err)
	}
	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	uris := map[string]bool{}
	for _, r := range list.Resources {
		uris[r.URI] = true
	}
	for _, want := range []string{"quire://alpha/SOUL.md", "quire://alpha/MEMORY.md", "quire://alpha/users/alice/MEMORY.md"} {
		if !uris[want] {
			t.Errorf("resources lack %s: %v", want, uris)
		}
	}
	for uri := range uris {
		if strings.Contains(uri, "/users/bob/") {
			t.Errorf("alice's session lists bob's file %s", uri)
		}
	}
}

// TestPromptEqualsAPI: the MCP prompt is the API's prompt, byte for byte,
// for every session and channel.
func TestPromptEqualsAPI(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	td := startDaemon(t, daemon.Options{})
	td.deploy(t, "alpha", "alpha", alphaFiles)
	cs := mustConnect(t, socketHTTP(td.socket), "http://quire/mcp?agent=alpha&user=alice", nil)
	for _, c := range []struct{ session, channel string }{{"", ""}, {"main", "group"}, {"subagent", "dm"}, {"cron", ""}} {
		want, err := td.c.Prompt(ctx, "alpha", api.PromptRequest{User: "alice", Session: prompt.Session(c.session), Channel: prompt.Channel(c.channel)})
		if err != nil {
			t.Fatal(err)
		}
		got, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "system_prompt", Arguments: map[string]string{"session": c.session, "channel": c.channel}})
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if len(got.Messages) != 1 || got.Messages[0].Content.(*sdk.TextContent).Text != want.Prompt {
			t.Errorf("%+v: the MCP prompt differs from the API's (%d bytes)", c, len(want.Prompt))
		}
	}
	if _, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "system_prompt", Arguments: map[string]string{"session": "weekly"}}); err == nil || !strings.Contains(err.Error(), "weekly") {
		t.Errorf("a bad session: err = %v, want the API's bad_request naming it", err)
	}
}

// TestUserNeverSeesAnotherUser: alice's session reaches bob's memory
// through no tool, prompt or resource.
func TestUserNeverSeesAnotherUser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	td := startDaemon(t, daemon.Options{})
	td.deploy(t, "alpha", "alpha", alphaFiles)
	cs := mustConnect(t, socketHTTP(td.socket), "http://quire/mcp?agent=alpha&user=alice", nil)

	calls := []struct {
		tool string
		args map[string]any
	}{
		{"memory_search", map[string]any{"query": "black coffee baker BOB-MARK", "limit": 50}},
		{"memory_get", map[string]any{"path": "users/bob/MEMORY.md"}},
		{"memory_get", map[string]any{"path": "users/bob/MEMORY.md", "scope": "agent"}},
		{"memory_get", map[string]any{"path": "memory/../users/bob/MEMORY.md"}},
		{"memory_get", map[string]any{"path": "USER.md"}},
		{"memory_write", map[string]any{"path": "users/bob/MEMORY.md", "content": "x", "if_match": "*", "scope": "agent"}},
		{"memory_write", map[string]any{"path": "users/bob/MEMORY.md", "content": "x", "if_match": "*"}},
		{"skill_search", map[string]any{"query": "bob"}},
		{"skill_get", map[string]any{"name": "../users/bob"}},
	}
	for _, c := range calls {
		text, _ := call(t, cs, c.tool, c.args)
		if strings.Contains(text, "BOB-MARK") {
			t.Errorf("%s %v returned bob's memory: %s", c.tool, c.args, text)
		}
	}
	if e := callErr(t, cs, "memory_get", map[string]any{"path": "users/bob/MEMORY.md", "scope": "agent"}); e.Code != "forbidden" {
		t.Errorf("memory_get users/bob: code %s, want forbidden", e.Code)
	}
	for _, uri := range []string{"quire://alpha/users/bob/MEMORY.md", "quire://alpha/users/bob/USER.md", "quire://alpha/users/alice/../bob/USER.md", "quire://alpha/users%2Fbob%2FUSER.md", "quire://alpha/USERS/bob/USER.md"} {
		res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if err == nil {
			t.Errorf("read %s: got %+v, want an error", uri, res.Contents)
		}
	}
	if _, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "system_prompt", Arguments: map[string]string{"user": "bob"}}); err == nil {
		t.Error("alice's session assembled bob's prompt")
	}
	// Bob's own session does see his memory: the marker is findable.
	bob := mustConnect(t, socketHTTP(td.socket), "http://quire/mcp?agent=alpha&user=bob", nil)
	if text := callOK(t, bob, "memory_search", map[string]any{"query": "black coffee"}, nil); !strings.Contains(text, "BOB-MARK") {
		t.Fatalf("bob's own search lacks his memory: %s", text)
	}
}

// TestTokenScopes: on --api-listen, a token for agent alpha can neither
// open nor use a session of agent beta, and a session is bound to the
// token, agent and user that opened it.
func TestTokenScopes(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, daemon.Options{APIListen: "127.0.0.1:0", Tokens: api.Tokens{"tok-alpha": {"alpha"}, "tok-beta": {"beta"}}})
	td.deploy(t, "alpha", "alpha", alphaFiles)
	td.deploy(t, "beta", "beta", betaFiles)
	base := "http://" + td.d.APIAddr() + "/mcp"
	alphaHC := &http.Client{Transport: bearer{"tok-alpha", http.DefaultTransport}}

	if _, err := connect(t, alphaHC, base+"?agent=beta", nil); err == nil {
		t.Fatal("a token for alpha opened a session of beta")
	}
	if _, err := connect(t, http.DefaultClient, base+"?agent=alpha", nil); err == nil {
		t.Fatal("a session opened without a token")
	}
	status, body := rawInitialize(t, alphaHC, base+"?agent=beta", "")
	if status != http.StatusForbidden || !strings.Contains(body, `"code":"forbidden"`) {
		t.Errorf("initialize of beta with alpha's token: %d %s, want 403 with the API's forbidden body", status, body)
	}

	// A browser led to the loopback port by DNS rebinding names another
	// host: refused even with a token.
	req, _ := http.NewRequest(http.MethodPost, base+"?agent=alpha", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Host = "rebound.example:80"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if resp, err := alphaHC.Do(req); err != nil {
		t.Error(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("Host rebound.example: %s, want 403 or 421", resp.Status)
	}

	// Without ?agent= the token's only agent is chosen.
	cs := mustConnect(t, alphaHC, base, nil)
	text := callOK(t, cs, "memory_search", map[string]any{"query": "wifi password"}, nil)
	if !strings.Contains(text, "ALPHA-SECRET") || strings.Contains(text, "BETA-SECRET") {
		t.Fatalf("alpha's search: %s", text)
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if strings.Contains(tool.Description, "beta") {
			t.Errorf("alpha's session lists a tool of beta: %s", tool.Description)
		}
	}

	// The session id of alpha's session is no use with beta's token,
	// nor with alpha's token for another user.
	betaHC := &http.Client{Transport: bearer{"tok-beta", http.DefaultTransport}}
	for _, c := range []struct {
		hc  *http.Client
		url string
	}{{betaHC, base + "?agent=beta"}, {alphaHC, base + "?agent=alpha&user=bob"}} {
		status, body := rawCall(t, c.hc, c.url, cs.ID())
		if status != http.StatusForbidden || strings.Contains(body, "ALPHA-SECRET") {
			t.Errorf("%s with alpha's session id: %d %s, want 403", c.url, status, body)
		}
	}
}

func rawPost(t testing.TB, hc *http.Client, url, session, body string) (int, string) {
	t.Helper()
	resp, err := hc.Do(mcpRequest(url, session, []byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func rawInitialize(t testing.TB, hc *http.Client, url, session string) (int, string) {
	return rawPost(t, hc, url, session, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
}

func rawCall(t testing.TB, hc *http.Client, url, session string) (int, string) {
	return rawPost(t, hc, url, session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_search","arguments":{"query":"wifi password"}}}`)
}

// TestErrorsAreTheAPIs: a tool error carries the code and message the
// local API answers for the same request.
func TestErrorsAreTheAPIs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	td := startDaemon(t, daemon.Options{})
	td.deploy(t, "alpha", "alpha", alphaFiles)
	cs := mustConnect(t, socketHTTP(td.socket), "http://quire/mcp?agent=alpha", nil)
	apiErr := func(err error) api.Error {
		var e *api.Error
		if !errors.As(err, &e) {
			t.Fatalf("API answered %v, want an error", err)
		}
		e.Status = 0
		return *e
	}
	cases := []struct {
		name string
		tool string
		args map[string]any
		api  func() error
	}{
		{"unknown skill", "skill_get", map[string]any{"name": "juggling"}, func() error {
			_, err := td.c.Skill(ctx, "alpha", "juggling", "")
			return err
		}},
		{"stale etag", "memory_write", map[string]any{"path": "MEMORY.md", "content": "x\n", "if_match": `"0000"`}, func() error {
			_, err := td.c.WriteFile(ctx, "alpha", "MEMORY.md", "", `"0000"`, []byte("x\n"))
			return err
		}},
		{"over the write limit", "memory_write", map[string]any{"path": "memory/notes.md", "content": strings.Repeat("x", 401), "if_match": "*"}, func() error {
			_, err := td.c.WriteFile(ctx, "alpha", "memory/notes.md", "", "*", []byte(strings.Repeat("x", 401)))
			return err
		}},
		{"not writable", "memory_write", map[string]any{"path": "agent.yaml", "content": "name: x\n", "if_match": "*"}, func() error {
			_, err := td.c.WriteFile(ctx, "alpha", "agent.yaml", "", "*", []byte("name: x\n"))
			return err
		}},
		{"no if_match", "memory_write", map[string]any{"path": "MEMORY.md", "content": "x\n", "if_match": ""}, func() error {
			_, err := td.c.WriteFile(ctx, "alpha", "MEMORY.md", "", "", []byte("x\n"))
			return err
		}},
		{"append over the limit", "memory_append", map[string]any{"text": strings.Repeat("y", 401)}, func() error {
			_, err := td.c.MemoryAppend(ctx, "alpha", api.AppendRequest{Text: strings.Repeat("y", 401)})
			return err
		}},
		{"empty query", "memory_search", map[string]any{"query": " "}, func() error {
			_, err := td.c.MemorySearch(ctx, "alpha", api.SearchRequest{Query: " "})
			return err
		}},
	}
	// Arguments the schema refuses are the API's bad_request too.
	for _, args := range []map[string]any{{"query": "x", "limit": 51}, {"query": 3}, {}, {"query": "x", "colour": "red"}} {
		if e := callErr(t, cs, "memory_search", args); e.Code != "bad_request" || e.Message == "" {
			t.Errorf("memory_search %v: %+v, want bad_request", args, e)
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := apiErr(c.api())
			if got := callErr(t, cs, c.tool, c.args); got != want {
				t.Errorf("tool error %+v, API error %+v", got, want)
			}
		})
	}

	// /metrics counts tool calls by tool and status, like API routes.
	resp, err := socketHTTP(td.socket).Get("http://quire/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`route="MCP tools/call memory_write",code="409"`, `route="MCP tools/call memory_write",code="428"`,
		`route="MCP tools/call memory_search",code="400"`, `route="MCP tools/call skill_get",code="404"`, `route="MCP initialize",code="200"`} {
		if !strings.Contains(string(metrics), "quire_api_request_seconds_count{"+want+"}") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestNotificationsAfterAPush: a subscriber of a workspace file hears of
// a push that changes it, and the resource list follows new files.
func TestNotificationsAfterAPush(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	td := startDaemon(t, daemon.Options{})
	dir := td.deploy(t, "alpha", "alpha", alphaFiles)
	updated := make(chan string, 16)
	listChanged := make(chan struct{}, 16)
	cs := mustConnect(t, socketHTTP(td.socket), "http://quire/mcp?agent=alpha&user=alice", &sdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *sdk.ResourceUpdatedNotificationRequest) {
			updated <- r.Params.URI
		},
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { listChanged <- struct{}{} },
	})
	if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "quire://alpha/SOUL.md"}); err != nil {
		t.Fatal(err)
	}
	testenv.WriteFiles(t, dir, map[string]string{"SOUL.md": "# Soul\n\nWarmer now. SOUL-TWO\n", "HEARTBEAT.md": "# Heartbeat\n\nCheck the boiler.\n"})
	testenv.Git(t, dir, "add", "-A")
	testenv.Git(t, dir, "commit", "-q", "-m", "warmer")
	testenv.Git(t, dir, "push", "-q", td.remote+"/alpha.git", "main")
	select {
	case uri := <-updated:
		if uri != "quire://alpha/SOUL.md" {
			t.Errorf("updated %s, want quire://alpha/SOUL.md", uri)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no resources/updated notification within 15 s of the push")
	}
	select {
	case <-listChanged:
	case <-time.After(15 * time.Second):
		t.Fatal("no resources/list_changed notification after a push added HEARTBEAT.md")
	}
	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "quire://alpha/SOUL.md"})
	if err != nil || !strings.Contains(res.Contents[0].Text, "SOUL-TWO") {
		t.Fatalf("after the push SOUL.md reads %+v, %v", res, err)
	}
}

// TestShutdownWithOpenSessions: an MCP session with its event stream open
// does not hold the daemon's shutdown up.
func TestShutdownWithOpenSessions(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, daemon.Options{})
	td.deploy(t, "alpha", "alpha", alphaFiles)
	hc, opened := signalStream(socketHTTP(td.socket), "/mcp")
	cs := mustConnect(t, hc, "http://quire/mcp?agent=alpha", nil)
	if err := cs.Subscribe(context.Background(), &sdk.SubscribeParams{URI: "quire://alpha/SOUL.md"}); err != nil {
		t.Fatal(err)
	}
	waitOpened(t, "the standalone stream", opened)
	if took := td.stop(); took > 5*time.Second {
		t.Errorf("shutdown took %v with an MCP session open", took)
	}
}

// TestUnknownAgent: a session for an agent nobody deployed is refused
// with the API's code.
func TestUnknownAgent(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, daemon.Options{})
	td.deploy(t, "alpha", "alpha", alphaFiles)
	status, body := rawInitialize(t, socketHTTP(td.socket), "http://quire/mcp?agent=gamma", "")
	if status != http.StatusNotFound || !strings.Contains(body, `"code":"unknown_agent"`) {
		t.Errorf("initialize of gamma: %d %s", status, body)
	}
}

// TestRemoteResyncsAfterADaemonRestart: `quire mcp`'s backend (a client
// of the daemon) notices what changed while the daemon was down: a
// subscriber hears of a file pushed to the repository meanwhile.
func TestRemoteResyncsAfterADaemonRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tmp := t.TempDir()
	repos, sock := filepath.Join(tmp, "repos"), filepath.Join(shortDir(t), "q.sock")
	run := func() (*daemon.Daemon, func()) {
		dctx, cancel := context.WithCancel(ctx)
		d, err := daemon.New(dctx, daemon.Options{ReposDir: repos, AllowCreate: true, GitListen: "127.0.0.1:0", Socket: sock, CacheDir: filepath.Join(tmp, "cache")})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- d.Run(dctx) }()
		<-d.Ready()
		return d, func() { cancel(); <-done }
	}
	d, stop := run()
	dir := testenv.NewWorkTree(t, alphaFiles, "workspace")
	testenv.Git(t, dir, "push", "-q", "http://"+d.GitAddr()+"/alpha.git", "main")

	updated := make(chan string, 16)
	hc, opened := signalStream(socketHTTP(sock), "/v1/events")
	c := &client.Client{Socket: sock, HTTPClient: hc}
	b := mcp.Remote(c, nil)
	waitFor(t, "alpha to be deployed", func() bool { _, err := c.Prompt(ctx, "alpha", api.PromptRequest{}); return err == nil })
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, ct := sdk.NewInMemoryTransports()
	srv := mcp.NewServer(sctx, b, mcp.Identity{Agent: "alpha"}, mcp.Options{})
	if _, err := srv.Connect(sctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "0"}, &sdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *sdk.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
	}).Connect(sctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "quire://alpha/SOUL.md"}); err != nil {
		t.Fatal(err)
	}
	waitOpened(t, "the daemon's event stream", opened)
	stop()
	// While no daemon runs, SOUL.md changes in the hosted repository.
	testenv.WriteFiles(t, dir, map[string]string{"SOUL.md": "# Soul\n\nChanged offline. SOUL-OFFLINE\n"})
	testenv.Git(t, dir, "commit", "-q", "-am", "offline")
	testenv.Git(t, dir, "push", "-q", filepath.Join(repos, "alpha.git"), "main")
	_, stop = run()
	defer stop()
	select {
	case uri := <-updated:
		if uri != "quire://alpha/SOUL.md" {
			t.Errorf("updated %s", uri)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no resources/updated after the daemon came back with a changed SOUL.md")
	}
}

// shortDir is a temporary directory with a short path, for sockets.
func shortDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "qm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
