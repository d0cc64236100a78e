package daemon_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/client"
)

// TestFileWrites covers behavior.md §7 over the socket: ETag and If-Match
// (428, 409), the allow list (422), escaping paths (400), the write limit
// (413), proposals for persona files, BOOTSTRAP.md deletion and per-user
// seeding.
func TestFileWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	td := startDaemon(t, daemon.Options{})
	wt := newWorkTree(t, botFiles)
	td.push(t, wt, "bot")
	head := func() string {
		return strings.Fields(git(t, td.repos, "--git-dir", filepath.Join(td.repos, "bot.git"), "rev-parse", "live"))[0]
	}

	f, err := td.c.ReadFile(ctx, "bot", "MEMORY.md", "")
	if err != nil || !strings.Contains(f.Content, "wifi") || f.ETag == "" {
		t.Fatalf("read MEMORY.md: %+v %v", f, err)
	}
	code, hdr, _ := td.raw(t, http.MethodGet, "/v1/agents/bot/files/MEMORY.md", nil, "")
	if code != 200 || hdr.Get("ETag") != f.ETag {
		t.Fatalf("ETag header %q, want %q", hdr.Get("ETag"), f.ETag)
	}

	tests := []struct {
		name, path, user, ifMatch, body string
		want                            int
	}{
		{"no If-Match", "MEMORY.md", "", "", "new", http.StatusPreconditionRequired},
		{"stale If-Match", "MEMORY.md", "", `"0123"`, "new", http.StatusConflict},
		{"create needs *", "memory/notes.md", "", f.ETag, "new", http.StatusConflict},
		{"outside the allow list", "agent.yaml", "", "*", "name: x\n", http.StatusUnprocessableEntity},
		{"heartbeat not writable", "HEARTBEAT.md", "", "*", "x", http.StatusUnprocessableEntity},
		{"agent-level USER.md", "USER.md", "", "*", "x", http.StatusUnprocessableEntity},
		{"virtual file", "TEAM.md", "", "*", "x", http.StatusUnprocessableEntity},
		{"escape with ..", "..%2F..%2Fetc%2Fpasswd", "", "*", "x", http.StatusBadRequest},
		{"escape into memory", "memory%2F..%2F..%2Fx.md", "", "*", "x", http.StatusBadRequest},
		{"into .git", "memory%2F.git%2Fconfig", "", "*", "x", http.StatusBadRequest},
		{"into .GIT", "memory%2F.GIT%2Fx.md", "", "*", "x", http.StatusBadRequest},
		{"weak ETag", "MEMORY.md", "", "W/" + f.ETag, "new", http.StatusConflict},
		{"over the write limit", "MEMORY.md", "", "*", strings.Repeat("x", 201), http.StatusRequestEntityTooLarge},
		{"empty user id", "USER.md", "", "*", "x", http.StatusUnprocessableEntity},
		// If-Match: * creates and never replaces (issue 11 item 8).
		{"* never replaces", "MEMORY.md", "", "*", "x", http.StatusConflict},
		{"a daily log is append-only", "memory%2F2020-01-01.md", "", "*", "x", http.StatusUnprocessableEntity},
		// A file where a directory would be: the log is not deleted to
		// make a directory.
		{"parent is a file", "memory%2F2020-01-01.md%2Fsub.md", "", "*", "x", http.StatusConflict},
		{"parent is a file, deeper", "memory%2F2020-01-01.md%2Fa%2Fb.md", "", "*", "x", http.StatusConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := head()
			h := http.Header{}
			if tt.ifMatch != "" {
				h.Set("If-Match", tt.ifMatch)
			}
			p := "/v1/agents/bot/files/" + tt.path
			if tt.user != "" {
				p += "?user=" + tt.user
			}
			code, _, body := td.raw(t, http.MethodPut, p, h, tt.body)
			if code != tt.want || !strings.Contains(body, `"error":{"code":`) {
				t.Errorf("PUT %s: %d %s, want %d", tt.path, code, body, tt.want)
			}
			if head() != before {
				t.Error("a refused write moved the branch")
			}
		})
	}
	if day, err := td.c.ReadFile(ctx, "bot", "memory/2020-01-01.md", ""); err != nil || !strings.Contains(day.Content, "An old day.") {
		t.Fatalf("the daily log after refused writes: %+v %v", day, err)
	}
	_, _, body := td.raw(t, http.MethodPut, "/v1/agents/bot/files/MEMORY.md", http.Header{"If-Match": {"*"}}, strings.Repeat("x", 201))
	if !strings.Contains(body, "200") {
		t.Errorf("413 does not name the limit: %s", body)
	}

	// An accepted write with the current ETag; the old ETag is stale after.
	w, err := td.c.WriteFile(ctx, "bot", "MEMORY.md", "", f.ETag, []byte("# Memory\n\nThe wifi password changed.\n"))
	if err != nil || w.Branch != "live" || w.Commit != head() {
		t.Fatalf("write: %+v %v", w, err)
	}
	if _, err := td.c.WriteFile(ctx, "bot", "MEMORY.md", "", f.ETag, []byte("lost update")); apiStatus(err) != http.StatusConflict {
		t.Fatalf("stale write: %v", err)
	}
	f2, _ := td.c.ReadFile(ctx, "bot", "MEMORY.md", "")
	if f2.ETag != w.ETag || !strings.Contains(f2.Content, "changed") {
		t.Fatalf("read after write: %+v", f2)
	}

	// A persona file goes to a proposal branch that starts at main;
	// neither main nor live moves.
	before := head()
	soul, err := td.c.ReadFile(ctx, "bot", "SOUL.md", "")
	if err != nil {
		t.Fatal(err)
	}
	pw, err := td.c.WriteFile(ctx, "bot", "SOUL.md", "", soul.ETag, []byte("# Soul\n\nProposed soul.\n"))
	if err != nil || pw.Branch != "proposals/bot/1" {
		t.Fatalf("proposal: %+v %v", pw, err)
	}
	if head() != before {
		t.Fatal("a persona write moved live")
	}
	// The same ETag again opens no second proposal: the first answers.
	pw2, err := td.c.WriteFile(ctx, "bot", "SOUL.md", "", soul.ETag, []byte("# Soul\n\nAnother.\n"))
	if err != nil || pw2.Branch != "proposals/bot/1" || pw2.Commit != pw.Commit {
		t.Fatalf("second write on the same ETag: %+v %v, want proposals/bot/1", pw2, err)
	}
	clone := filepath.Join(t.TempDir(), "c")
	git(t, t.TempDir(), "clone", "-q", td.remote+"/bot.git", clone)
	git(t, clone, "fetch", "-q", "origin", "proposals/bot/1")
	if diff := git(t, clone, "diff", "--name-only", "origin/main", "FETCH_HEAD"); strings.TrimSpace(diff) != "SOUL.md" {
		t.Fatalf("proposal branch differs from main in %q, want SOUL.md only", diff)
	}
	p, _ := td.c.Prompt(ctx, "bot", api.PromptRequest{})
	if strings.Contains(p.Prompt, "Proposed soul") || !strings.Contains(p.Prompt, "MARKER-ONE") {
		t.Fatal("a proposal reached the served prompt")
	}

	// A user's first request reads their seed files without a commit;
	// their first write stores the seeds with it; an odd id stays
	// inside users/.
	odd := "../../Eve/x"
	beforePrompt := head()
	if _, err := td.c.Prompt(ctx, "bot", api.PromptRequest{User: odd}); err != nil {
		t.Fatal(err)
	}
	if head() != beforePrompt {
		t.Fatal("a prompt read wrote a commit")
	}
	if _, err := td.c.MemoryAppend(ctx, "bot", api.AppendRequest{User: odd, Text: "first words"}); err != nil {
		t.Fatal(err)
	}
	git(t, clone, "checkout", "-q", "-b", "l", "origin/live")
	git(t, clone, "pull", "-q", "origin", "live")
	entries, _ := filepath.Glob(filepath.Join(clone, "users", "*", "*.md"))
	var seeded []string
	for _, e := range entries {
		rel, _ := filepath.Rel(clone, e)
		seeded = append(seeded, filepath.ToSlash(rel))
	}
	if want := "users/%2E.%2F..%2F%45ve%2Fx/BOOTSTRAP.md users/%2E.%2F..%2F%45ve%2Fx/USER.md"; strings.Join(seeded, " ") != want {
		t.Fatalf("seeded %v, want %s", seeded, want)
	}
	for _, s := range seeded {
		if strings.Count(s, "/") != 2 {
			t.Fatalf("user files escaped their directory: %v", seeded)
		}
	}
	user, err := td.c.ReadFile(ctx, "bot", "USER.md", odd)
	if err != nil || !strings.Contains(user.Content, "Shared default.") {
		t.Fatalf("seeded USER.md is not the agent's: %+v %v", user, err)
	}
	// Writing BOOTSTRAP.md empty deletes it.
	bs, err := td.c.ReadFile(ctx, "bot", "BOOTSTRAP.md", odd)
	if err != nil {
		t.Fatal(err)
	}
	dw, err := td.c.WriteFile(ctx, "bot", "BOOTSTRAP.md", odd, bs.ETag, []byte("  \n"))
	if err != nil || !dw.Deleted {
		t.Fatalf("empty BOOTSTRAP.md: %+v %v", dw, err)
	}
	if _, err := td.c.ReadFile(ctx, "bot", "BOOTSTRAP.md", odd); apiStatus(err) != http.StatusNotFound {
		t.Fatalf("BOOTSTRAP.md still there: %v", err)
	}
	if _, err := td.c.ReadFile(ctx, "bot", "TEAM.md", ""); apiStatus(err) != http.StatusUnprocessableEntity {
		t.Errorf("virtual file read: %v", err)
	}
	if _, err := td.c.Prompt(ctx, "bot", api.PromptRequest{User: strings.Repeat("x", 400)}); apiStatus(err) != http.StatusBadRequest {
		t.Errorf("overlong user id: %v", err)
	}
}

// TestAppendRefusals: appended text cannot forge an entry heading, and a
// caller-chosen time cannot name a daily log outside the calendar's sane
// years; neither writes anything.
func TestAppendRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	td := startDaemon(t, daemon.Options{})
	td.push(t, newWorkTree(t, botFiles), "bot")
	ancient := time.Date(0, 12, 31, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		req  api.AppendRequest
		want int
	}{
		{api.AppendRequest{Text: "Fine.\n## 09:15\nForged entry."}, http.StatusUnprocessableEntity},
		{api.AppendRequest{Text: "##  7:30 forged"}, http.StatusUnprocessableEntity},
		{api.AppendRequest{Text: "ok", Now: &ancient}, http.StatusBadRequest},
	} {
		if _, err := td.c.MemoryAppend(ctx, "bot", tc.req); apiStatus(err) != tc.want {
			t.Errorf("append %+v: %v, want %d", tc.req, err, tc.want)
		}
	}
	if _, err := td.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: "## Summary\nA markdown heading is fine."}); err != nil {
		t.Errorf("an ordinary heading was refused: %v", err)
	}
}

// TestTokens checks the TCP listener's bearer tokens and their agent
// scopes.
func TestTokens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tokens, err := api.ParseTokens(strings.NewReader("# tokens\nall-agents *\nbot-only bot\nother-only other\n"))
	if err != nil {
		t.Fatal(err)
	}
	td := startDaemon(t, daemon.Options{APIListen: "127.0.0.1:0", Tokens: tokens})
	wt := newWorkTree(t, botFiles)
	td.push(t, wt, "bot")
	base := "http://" + td.d.APIAddr()
	tests := []struct {
		token string
		want  int
	}{
		{"", http.StatusUnauthorized},
		{"wrong", http.StatusUnauthorized},
		{"other-only", http.StatusForbidden},
		{"bot-only", http.StatusOK},
		{"all-agents", http.StatusOK},
	}
	for _, tt := range tests {
		c := &client.Client{BaseURL: base, Token: tt.token}
		_, err := c.Prompt(ctx, "bot", api.PromptRequest{})
		if got := apiStatus(err); (tt.want == 200 && err != nil) || (tt.want != 200 && got != tt.want) {
			t.Errorf("token %q: %v, want %d", tt.token, err, tt.want)
		}
	}
	// The agents list only shows what a token may use.
	as, err := (&client.Client{BaseURL: base, Token: "other-only"}).Agents(ctx)
	if err != nil || len(as) != 0 {
		t.Errorf("other-only sees %+v %v", as, err)
	}
	// The socket needs no token.
	if _, err := td.c.Prompt(ctx, "bot", api.PromptRequest{}); err != nil {
		t.Error(err)
	}
}

// TestSocket checks the socket's modes and that a live socket is never
// taken over while a stale one is replaced.
func TestSocket(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, daemon.Options{})
	st, err := os.Stat(td.c.Socket)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode: %v %v", st.Mode(), err)
	}
	dst, _ := os.Stat(filepath.Dir(td.c.Socket))
	if dst.Mode().Perm() != 0o700 {
		t.Fatalf("socket directory mode %v", dst.Mode())
	}
	// A second daemon on the same socket refuses to start.
	d2, err := daemon.New(context.Background(), daemon.Options{ReposDir: t.TempDir(), GitListen: "127.0.0.1:0", Socket: td.c.Socket, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := d2.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "another daemon") {
		t.Fatalf("second daemon: %v", err)
	}
	if _, err := td.c.Status(context.Background()); err != nil {
		t.Fatalf("first daemon lost its socket: %v", err)
	}
	// After a stop, the file is gone; a stale socket (a crashed daemon's)
	// is replaced.
	td.stop()
	l, err := net.Listen("unix", td.c.Socket)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	td3 := startDaemon(t, daemon.Options{Socket: td.c.Socket})
	if _, err := td3.c.Status(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestSlowClientsCutOff: a client that drips its headers, or its body,
// is disconnected once the timeouts pass instead of holding a connection
// (and a file descriptor) for as long as it likes.
func TestSlowClientsCutOff(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, daemon.Options{HeaderTimeout: 300 * time.Millisecond, BodyTimeout: 600 * time.Millisecond})
	td.push(t, newWorkTree(t, botFiles), "bot")
	for _, tt := range []struct{ name, send string }{
		{"headers", "POST /v1/agents/bot/prompt HTTP/1.1\r\nHost: quire\r\n"},
		{"body", "POST /v1/agents/bot/prompt HTTP/1.1\r\nHost: quire\r\nContent-Length: 100\r\n\r\n{\"user\":"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.Dial("unix", td.c.Socket)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := io.WriteString(c, tt.send); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, err = io.ReadAll(c)
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("the connection was still open after %s", time.Since(start))
			}
		})
	}
}
