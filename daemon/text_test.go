package daemon_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/internal/testenv"
	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/pgstore"
)

// The rule's wording, as every refusal ends.
const (
	textRule = "text must be printable (tab, CR and LF are allowed)"
	lineRule = "it must be printable, without any control character"
)

// TestWritesRefuseControlCharacters: every write path of the API refuses
// text holding a NUL or another control character (tab, CR and LF
// allowed in text) and every route that takes a user id refuses one
// holding any control character, with a 400 naming the field and the
// byte; nothing reaches git.
func TestWritesRefuseControlCharacters(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, daemon.Options{})
	wt := newWorkTree(t, botFiles)
	td.push(t, wt, "bot")
	bare := filepath.Join(td.repos, "bot.git")
	refs := func() string { return git(t, td.repos, "--git-dir", bare, "for-each-ref") }
	before := refs()

	jsonHeader := http.Header{"Content-Type": {"application/json"}}
	create := http.Header{"If-Match": {"*"}}
	createJSON := http.Header{"If-Match": {"*"}, "Content-Type": {"application/json"}}
	tests := []struct {
		name, method, path string
		header             http.Header
		body               string
		code               api.Code
		message            string
	}{
		// Appends.
		{"append NUL", "POST", "/v1/agents/bot/memory/append", jsonHeader, `{"text":"Met Ana\u0000 today"}`,
			api.CodeBadRequest, "text: control character U+0000 at byte 7: " + textRule},
		{"append escape", "POST", "/v1/agents/bot/memory/append", jsonHeader, `{"text":"red: \u001b[31m"}`,
			api.CodeBadRequest, "text: control character U+001B at byte 5: " + textRule},
		{"append DEL", "POST", "/v1/agents/bot/memory/append", jsonHeader, `{"text":"x\u007f"}`,
			api.CodeBadRequest, "text: control character U+007F at byte 1: " + textRule},
		{"append user NUL", "POST", "/v1/agents/bot/memory/append", jsonHeader, `{"user":"a\u0000b","text":"fine"}`,
			api.CodeBadUser, "user: control character U+0000 at byte 1: " + lineRule},
		{"append user newline", "POST", "/v1/agents/bot/memory/append", jsonHeader, `{"user":"alice\n","text":"fine"}`,
			api.CodeBadUser, "user: control character U+000A at byte 5: " + lineRule},
		// File writes: a raw body, a JSON body, a persona file (a
		// proposal), a user's file.
		{"write raw NUL", "PUT", "/v1/agents/bot/files/memory/notes.md", create, "# Notes\n\x00",
			api.CodeBadRequest, "content: control character U+0000 at byte 8: " + textRule},
		{"write JSON NUL", "PUT", "/v1/agents/bot/files/memory/notes.md", createJSON, `{"content":"# Notes\n\u0000"}`,
			api.CodeBadRequest, "content: control character U+0000 at byte 8: " + textRule},
		{"write vertical tab", "PUT", "/v1/agents/bot/files/MEMORY.md", http.Header{"If-Match": {"*"}}, "a\vb",
			api.CodeBadRequest, "content: control character U+000B at byte 1: " + textRule},
		{"proposal NUL", "PUT", "/v1/agents/bot/files/SOUL.md", create, "# Soul\n\x00",
			api.CodeBadRequest, "content: control character U+0000 at byte 7: " + textRule},
		{"write user NUL", "PUT", "/v1/agents/bot/files/USER.md?user=a%00b", create, "# User\n",
			api.CodeBadUser, "user: control character U+0000 at byte 1: " + lineRule},
		{"write user tab", "PUT", "/v1/agents/bot/files/USER.md?user=a%09b", create, "# User\n",
			api.CodeBadUser, "user: control character U+0009 at byte 1: " + lineRule},
		{"write path control", "PUT", "/v1/agents/bot/files/memory/a%01.md", create, "x",
			api.CodeBadPath, "path: control character U+0001 at byte 8: " + lineRule},
		{"write path NUL", "PUT", "/v1/agents/bot/files/memory/a%00.md", create, "x",
			api.CodeBadPath, "path: control character U+0000 at byte 8: " + lineRule},
		// Routes that read with a user id.
		{"read user NUL", "GET", "/v1/agents/bot/files/USER.md?user=a%00b", nil, "",
			api.CodeBadUser, "user: control character U+0000 at byte 1: " + lineRule},
		{"prompt user NUL", "POST", "/v1/agents/bot/prompt", jsonHeader, `{"user":"a\u0000b"}`,
			api.CodeBadRequest, `user "a\x00b": bad id: control character U+0000 at byte 1: ` + lineRule},
		{"prompt room NUL", "POST", "/v1/agents/bot/prompt", jsonHeader, `{"channel":"group","room":"r\u0000"}`,
			api.CodeBadRequest, `room: bad id: control character U+0000 at byte 1: ` + lineRule},
		{"search user NUL", "POST", "/v1/agents/bot/memory/search", jsonHeader, `{"query":"wifi","user":"a\u0000b"}`,
			api.CodeBadRequest, `user "a\x00b": bad id: control character U+0000 at byte 1: ` + lineRule},
		{"flush-plan user NUL", "POST", "/v1/agents/bot/memory/flush-plan", jsonHeader, `{"user":"a\u0000b","context_window":1000,"total_tokens":10}`,
			api.CodeBadRequest, `user "a\x00b": user: bad id: control character U+0000 at byte 1: ` + lineRule},
		{"skills search user NUL", "POST", "/v1/agents/bot/skills/search", jsonHeader, `{"query":"greet","user":"a\u0000b"}`,
			api.CodeBadRequest, `user "a\x00b": bad id: control character U+0000 at byte 1: ` + lineRule},
		{"skills user NUL", "GET", "/v1/agents/bot/skills?user=a%00b", nil, "",
			api.CodeBadRequest, `user "a\x00b": bad id: control character U+0000 at byte 1: ` + lineRule},
		{"skill user NUL", "GET", "/v1/agents/bot/skills/greeting?user=a%00b", nil, "",
			api.CodeBadRequest, `user "a\x00b": bad id: control character U+0000 at byte 1: ` + lineRule},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, _, body := td.raw(t, tt.method, tt.path, tt.header, tt.body)
			var eb api.ErrorBody
			if err := json.Unmarshal([]byte(body), &eb); err != nil {
				t.Fatalf("%s %s: %d %q: %v", tt.method, tt.path, status, body, err)
			}
			if status != http.StatusBadRequest || eb.Error.Code != tt.code || eb.Error.Message != tt.message {
				t.Errorf("%s %s: %d %s %q\nwant 400 %s %q", tt.method, tt.path, status, eb.Error.Code, eb.Error.Message, tt.code, tt.message)
			}
		})
	}
	if after := refs(); after != before {
		t.Errorf("refused writes moved refs:\n%s\nwas:\n%s", after, before)
	}

	// Tab, CR and LF are text: an append holding them is taken.
	ctx := context.Background()
	if _, err := td.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: "col\tvalue\r\nnext line"}); err != nil {
		t.Fatalf("append with tab and CRLF: %v", err)
	}
}

// TestPushRefusesControlCharacters: a pushed context file holding a
// control character is refused with its line and byte, like `quire check`.
func TestPushRefusesControlCharacters(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, daemon.Options{})
	wt := newWorkTree(t, botFiles)
	td.push(t, wt, "bot")
	testenv.WriteFiles(t, wt, map[string]string{"memory/2026-01-02.md": "# 2026-01-02\n\n## 10:00\n\nMet Ana\x00 today\n"})
	git(t, wt, "add", "-A")
	git(t, wt, "commit", "-q", "-m", "a NUL")
	out, err := gitMay(wt, "push", td.remote+"/bot.git", "main")
	const want = "remote: error:   memory/2026-01-02.md: line 5: holds the control character U+0000 at byte 31: context files must be printable text (tab, CR and LF are allowed); remove it"
	if err == nil || !strings.Contains(out, want) {
		t.Fatalf("push of a NUL: %v\n%s\nwant it refused with %q", err, out, want)
	}
}

// TestMCPWritesRefuseControlCharacters: the MCP tools write through the
// same daemon calls, so they refuse the same text with the same errors,
// and a session for a user id holding a control character is refused.
func TestMCPWritesRefuseControlCharacters(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, daemon.Options{})
	wt := newWorkTree(t, botFiles)
	td.push(t, wt, "bot")
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", td.c.Socket)
	}}}

	c := sdk.NewClient(&sdk.Implementation{Name: "quire-test", Version: "0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: "http://quire/mcp?agent=bot&user=alice", HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tests := []struct {
		tool    string
		args    map[string]any
		message string
	}{
		{"memory_append", map[string]any{"text": "Met Ana\x00 today"}, "text: control character U+0000 at byte 7: " + textRule},
		{"memory_append", map[string]any{"text": "\x1b[31m"}, "text: control character U+001B at byte 0: " + textRule},
		{"memory_write", map[string]any{"path": "memory/notes.md", "content": "# Notes\n\x00", "if_match": "*", "scope": "agent"},
			"content: control character U+0000 at byte 8: " + textRule},
		{"memory_write", map[string]any{"path": "USER.md", "content": "# User\n\x7f", "if_match": "*", "scope": "user"},
			"content: control character U+007F at byte 7: " + textRule},
	}
	bare := filepath.Join(td.repos, "bot.git")
	before := git(t, td.repos, "--git-dir", bare, "for-each-ref")
	for _, tt := range tests {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tt.tool, Arguments: tt.args})
		if err != nil {
			t.Fatalf("%s: %v", tt.tool, err)
		}
		var text string
		for _, ct := range res.Content {
			if tc, ok := ct.(*sdk.TextContent); ok {
				text += tc.Text
			}
		}
		var eb api.ErrorBody
		if !res.IsError || json.Unmarshal([]byte(text), &eb) != nil || eb.Error.Code != api.CodeBadRequest || eb.Error.Message != tt.message {
			t.Errorf("%s %q: error %v %s\nwant bad_request %q", tt.tool, tt.args, res.IsError, text, tt.message)
		}
	}
	if after := git(t, td.repos, "--git-dir", bare, "for-each-ref"); after != before {
		t.Errorf("refused MCP writes moved refs:\n%s", after)
	}

	status, _, body := td.raw(t, "POST", "/mcp?agent=bot&user=a%00b", http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}},
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	const want = `user "a\x00b" cannot name a directory: bad id: control character U+0000 at byte 1: ` + lineRule
	var eb api.ErrorBody
	if status != http.StatusBadRequest || json.Unmarshal([]byte(body), &eb) != nil || eb.Error.Code != api.CodeBadUser || eb.Error.Message != want {
		t.Errorf("MCP session for user a\\x00b: %d %s\nwant 400 bad_user %q", status, body, want)
	}
}

// TestNULDailyLogIndexed: a daily log holding a NUL that reached live
// before the rules (committed with git itself, past the daemon) leaves
// the rest of the agent searchable, on either store, and status names it
// until the file is fixed.
func TestNULDailyLogIndexed(t *testing.T) {
	t.Parallel()
	stores := map[string]func(t *testing.T) memory.Store{
		"embedded": func(*testing.T) memory.Store { return nil },
		"postgres": func(t *testing.T) memory.Store {
			dbURL, schema := pgSchema(t)
			s, err := pgstore.Open(context.Background(), pgstore.Options{URL: dbURL, Schema: schema, Embedder: memory.Builtin{}, MaxConns: 4})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			testNULDailyLog(t, open)
		})
	}
}

func testNULDailyLog(t *testing.T, open func(t *testing.T) memory.Store) {
	ctx := context.Background()
	td := startDaemon(t, daemon.Options{})
	wt := newWorkTree(t, botFiles)
	td.push(t, wt, "bot")
	td.stop()

	// Past the daemon: a commit on main and live of the hosted
	// repository, made and pushed by git alone.
	bare := filepath.Join(td.repos, "bot.git")
	testenv.WriteFiles(t, wt, map[string]string{
		"memory/2026-01-02.md": "# 2026-01-02\n\n## 10:00\n\nMet Ana\x00 at the harbour.\n",
		"memory/2026-01-03.md": "# 2026-01-03\n\n## 11:00\n\nThe lighthouse keeper waved.\n",
	})
	git(t, wt, "add", "-A")
	git(t, wt, "commit", "-q", "-m", "a NUL, past the rules")
	git(t, wt, "push", "-q", "file://"+bare, "main:main", "main:live")
	head := strings.TrimSpace(git(t, wt, "rev-parse", "HEAD"))

	var opts daemon.Options
	opts.ReposDir = td.repos
	if s := open(t); s != nil {
		opts.Store = s
	}
	td2 := startDaemon(t, opts)
	const notIndexed = "index: memory/2026-01-02.md:5:8: not indexed: holds the control character U+0000 at byte 31: context files must be printable text (tab, CR and LF are allowed); remove it"
	td2.waitIndexed(t)
	st, err := td2.c.Status(ctx)
	if err != nil || len(st.Agents) != 1 {
		t.Fatalf("status: %+v %v", st, err)
	}
	if a := st.Agents[0]; a.Deployed != head || a.Indexed != head || a.LastError != notIndexed {
		t.Errorf("status: deployed %s, last_error %q; want %s, %q", a.Deployed, a.LastError, head, notIndexed)
	}
	for q, want := range map[string]string{"wifi fridge": "MEMORY.md", "lighthouse keeper": "memory/2026-01-03.md"} {
		res, err := td2.c.MemorySearch(ctx, "bot", api.SearchRequest{Query: q})
		if err != nil || len(res.Hits) == 0 || res.Hits[0].Path != want || res.Commit != head {
			t.Errorf("search %q: %+v %v; want %s first, at %s", q, res, err, want, head)
		}
	}
	res, err := td2.c.MemorySearch(ctx, "bot", api.SearchRequest{Query: "harbour"})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Hits {
		if h.Path == "memory/2026-01-02.md" {
			t.Errorf("search harbour: %+v; the skipped log was indexed", h)
		}
	}

	// Fixed by a person's push (through the API a daily log is
	// append-only), the log is indexed and status is clear.
	testenv.WriteFiles(t, wt, map[string]string{"memory/2026-01-02.md": "# 2026-01-02\n\n## 10:00\n\nMet Ana at the harbour.\n"})
	git(t, wt, "commit", "-qam", "fix the log")
	td2.push(t, wt, "bot")
	td2.waitIndexed(t)
	if st, err = td2.c.Status(ctx); err != nil || len(st.Agents) != 1 {
		t.Fatalf("status: %+v %v", st, err)
	}
	if a := st.Agents[0]; a.Indexed == head || a.Indexed != a.Deployed || a.LastError != "" {
		t.Errorf("status after the fix: last_error %q, want none", a.LastError)
	}
	if res, err := td2.c.MemorySearch(ctx, "bot", api.SearchRequest{Query: "harbour"}); err != nil || len(res.Hits) == 0 || res.Hits[0].Path != "memory/2026-01-02.md" {
		t.Errorf("search harbour after the fix: %+v %v", res, err)
	}
}
