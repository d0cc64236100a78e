package daemon_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/console"
)

// consoleTokens: Ada may use every agent, Bob only bot (and has no name).
var (
	consoleTokens = api.Tokens{"tok-ada": {"*"}, "tok-bob": {"bot"}}
	consolePeople = api.People{"tok-ada": {ID: "ada", Name: "Ada Lovelace", Email: "ada@example.com"}, "tok-bob": {ID: "bob"}}
)

// otherFiles is a second agent, "other".
func otherFiles() map[string]string {
	files := map[string]string{}
	for k, v := range botFiles {
		files[k] = v
	}
	files["agent.yaml"] = "name: other\ntype: predefined\n"
	return files
}

// startConsole runs a daemon hosting bot and other with the API (and
// the console) on TCP.
func startConsole(t *testing.T) *testDaemon {
	t.Helper()
	td := startConsoleB(t)
	td.push(t, newWorkTree(t, botFiles), "bot")
	td.push(t, newWorkTree(t, otherFiles()), "other")
	return td
}

// startConsoleB runs a daemon with the console on TCP and no agents.
func startConsoleB(t testing.TB) *testDaemon {
	t.Helper()
	return startDaemon(t, daemon.Options{APIListen: "127.0.0.1:0", Tokens: consoleTokens, People: consolePeople})
}

// newBrowserB returns an HTTP client signed in to the console at base
// with Ada's token, and the session's CSRF value.
func newBrowserB(t testing.TB, base string) (*http.Client, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	resp, err := hc.Post(base+"/ui/api/login", "application/json", strings.NewReader(`{"token":"tok-ada"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("login: %d", resp.StatusCode)
	}
	resp, err = hc.Get(base + "/ui/api/session")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var info console.SessionInfo
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		t.Fatal(err)
	}
	return hc, info.CSRF
}

// browser is an HTTP client with a cookie jar, talking to base as the
// console's pages do.
type browser struct {
	t    *testing.T
	base string
	hc   *http.Client
	csrf string
}

func newBrowser(t *testing.T, base string) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: base, hc: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// do sends a request; hdr adds headers. It returns the status, headers
// and body.
func (b *browser) do(method, path, body string, hdr map[string]string) (int, http.Header, string) {
	b.t.Helper()
	req, err := http.NewRequest(method, b.base+path, strings.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(out)
}

// login signs in with token and keeps the session's CSRF value.
func (b *browser) login(token string) console.SessionInfo {
	b.t.Helper()
	st, hdr, body := b.do("POST", "/ui/api/login", `{"token":"`+token+`"}`, map[string]string{"Origin": b.base})
	if st != http.StatusNoContent {
		b.t.Fatalf("login: %d %s", st, body)
	}
	ck := hdr.Get("Set-Cookie")
	for _, want := range []string{console.CookieName + "=", "Path=/", "HttpOnly", "SameSite=Strict"} {
		if !strings.Contains(ck, want) {
			b.t.Errorf("session cookie %q lacks %s", ck, want)
		}
	}
	if strings.Contains(ck, "Secure") {
		b.t.Errorf("session cookie %q is Secure on plain HTTP: the browser would not send it", ck)
	}
	var info console.SessionInfo
	st, _, body = b.do("GET", "/ui/api/session", "", nil)
	if st != 200 || json.Unmarshal([]byte(body), &info) != nil || info.CSRF == "" {
		b.t.Fatalf("session: %d %s", st, body)
	}
	b.csrf = info.CSRF
	return info
}

// change sends a change as the pages do: same origin, CSRF header.
func (b *browser) change(method, path, body string, hdr map[string]string) (int, http.Header, string) {
	h := map[string]string{"Origin": b.base, console.CSRFHeader: b.csrf, "Content-Type": "application/json"}
	for k, v := range hdr {
		h[k] = v
	}
	return b.do(method, path, body, h)
}

func TestConsoleScopedSession(t *testing.T) {
	td := startConsole(t)
	b := newBrowser(t, "http://"+td.d.APIAddr())
	if st, _, _ := b.do("GET", "/v1/agents", "", nil); st != http.StatusUnauthorized {
		t.Fatalf("no session, no token: %d, want 401", st)
	}
	info := b.login("tok-bob")
	if agents, _ := info.Agents.([]any); len(agents) != 1 || agents[0] != "bot" || info.ID != "bob" {
		t.Fatalf("session %+v, want bob with [bot]", info)
	}

	// Reads: only bot, in the API and the console's own routes.
	_, _, body := b.do("GET", "/v1/agents", "", nil)
	if !strings.Contains(body, `"bot"`) || strings.Contains(body, `"other"`) {
		t.Fatalf("agents of a session scoped to bot: %s", body)
	}
	if st, _, body := b.do("GET", "/v1/agents/other/files/SOUL.md", "", nil); st != http.StatusForbidden || !strings.Contains(body, `"forbidden"`) {
		t.Fatalf("another agent's file: %d %s", st, body)
	}
	if st, _, body := b.do("GET", "/ui/api/overview", "", nil); st != 200 || !strings.Contains(body, `"name":"bot"`) || strings.Contains(body, `"name":"other"`) {
		t.Fatalf("overview: %d %s", st, body)
	}
	for _, p := range []string{"/v1/agents/other/proposals", "/v1/agents/other/history", "/v1/agents/other/deploys"} {
		if st, _, _ := b.do("GET", p, "", nil); st != http.StatusForbidden {
			t.Errorf("GET %s: %d, want 403", p, st)
		}
	}

	// Changes: CSRF, then scope.
	f, err := td.c.ReadFile(context.Background(), "bot", "MEMORY.md", "")
	if err != nil {
		t.Fatal(err)
	}
	put := `{"content":"# Memory\n\nEdited by a person.\n"}`
	if st, _, body := b.do("PUT", "/v1/agents/bot/files/MEMORY.md", put, map[string]string{"If-Match": f.ETag, "Content-Type": "application/json"}); st != http.StatusForbidden || !strings.Contains(body, `"csrf"`) {
		t.Fatalf("a change without the CSRF header: %d %s", st, body)
	}
	if st, _, body := b.change("PUT", "/v1/agents/other/files/MEMORY.md", put, map[string]string{"If-Match": f.ETag}); st != http.StatusForbidden {
		t.Fatalf("a change to another agent: %d %s", st, body)
	}
	if st, _, body := b.change("POST", "/v1/agents/other/proposals/1/reject", "", nil); st != http.StatusForbidden {
		t.Fatalf("rejecting another agent's proposal: %d %s", st, body)
	}
	st, _, body := b.change("PUT", "/v1/agents/bot/files/MEMORY.md", put, map[string]string{"If-Match": f.ETag})
	if st != 200 || !strings.Contains(body, `"branch":"live"`) {
		t.Fatalf("a person's memory edit: %d %s", st, body)
	}
	// The same ETag again is stale: 412 with what the file holds now.
	st, _, body = b.change("PUT", "/v1/agents/bot/files/MEMORY.md", `{"content":"lost?"}`, map[string]string{"If-Match": f.ETag})
	var stale api.StaleEditBody
	if st != http.StatusPreconditionFailed || json.Unmarshal([]byte(body), &stale) != nil || !strings.Contains(stale.Content, "Edited by a person") || stale.ETag == "" {
		t.Fatalf("a stale edit: %d %s", st, body)
	}
	// Bob has no name: the commit on live is authored by his token's id.
	bare := filepath.Join(td.repos, "bot.git")
	if a := git(t, bare, "log", "-1", "--format=%an", "live"); strings.TrimSpace(a) != "bob" {
		t.Fatalf("live's last commit is by %q, want bob", a)
	}

	// Logged out, the cookie opens nothing.
	if st, _, _ := b.change("POST", "/ui/api/logout", "", nil); st != http.StatusNoContent {
		t.Fatalf("logout: %d", st)
	}
	if st, _, _ := b.do("GET", "/ui/api/session", "", nil); st != http.StatusUnauthorized {
		t.Fatalf("session after logout: %d", st)
	}
}

func TestConsoleOrigin(t *testing.T) {
	td := startConsole(t)
	base := "http://" + td.d.APIAddr()
	b := newBrowser(t, base)
	b.login("tok-ada")
	cases := []struct {
		name   string
		origin string
		want   int
	}{
		{"the console's own origin", base, 200},
		{"another site", "http://evil.example", http.StatusForbidden},
		{"another port of this host", "http://" + strings.Replace(td.d.APIAddr(), ":", ":1", 1), http.StatusForbidden},
		{"an opaque origin", "null", http.StatusForbidden},
	}
	for _, c := range cases {
		st, _, body := b.do("GET", "/v1/agents", "", map[string]string{"Origin": c.origin})
		if st != c.want {
			t.Errorf("%s (Origin %s): %d %s, want %d", c.name, c.origin, st, body, c.want)
		}
		st, _, _ = b.do("POST", "/ui/api/login", `{"token":"tok-ada"}`, map[string]string{"Origin": c.origin})
		if (st == http.StatusForbidden) != (c.want == http.StatusForbidden) {
			t.Errorf("%s: login answered %d", c.name, st)
		}
	}
	if st, _, _ := b.do("GET", "/v1/agents", "", map[string]string{"Referer": "http://evil.example/page"}); st != http.StatusForbidden {
		t.Errorf("a foreign Referer: %d, want 403", st)
	}
}

func TestConsolePages(t *testing.T) {
	td := startConsole(t)
	b := newBrowser(t, "http://"+td.d.APIAddr())
	for _, p := range []string{"/ui/", "/ui/agents/bot/memory"} {
		st, hdr, body := b.do("GET", p, "", nil)
		if st != 200 || !strings.Contains(body, "<html") {
			t.Fatalf("GET %s: %d %s", p, st, body)
		}
		for k, want := range map[string]string{"Cache-Control": "no-store", "Content-Security-Policy": "default-src 'self'",
			"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"} {
			if !strings.Contains(hdr.Get(k), want) {
				t.Errorf("GET %s: %s = %q, want %q in it", p, k, hdr.Get(k), want)
			}
		}
		if strings.Contains(hdr.Get("Content-Security-Policy"), "unsafe-inline") {
			t.Errorf("the CSP allows inline script")
		}
	}
}

func TestConsoleLoginCode(t *testing.T) {
	td := startConsole(t)
	var code daemon.LoginCode
	if _, err := td.c.Do(context.Background(), "POST", daemon.CodeRoute, nil, nil, &code); err != nil || code.Code == "" {
		t.Fatalf("a code from the socket: %+v %v", code, err)
	}
	if !strings.HasPrefix(code.URL, "http://"+td.d.APIAddr()+"/ui/login?code=") {
		t.Fatalf("login link %q", code.URL)
	}
	b := newBrowser(t, "http://"+td.d.APIAddr())
	u, _ := url.Parse(code.URL)
	st, hdr, _ := b.do("GET", u.RequestURI(), "", nil)
	if st != http.StatusSeeOther || hdr.Get("Location") != "/ui/" || !strings.Contains(hdr.Get("Set-Cookie"), console.CookieName) {
		t.Fatalf("login link: %d %v", st, hdr)
	}
	if st, _, body := b.do("GET", "/ui/api/session", "", nil); st != 200 || !strings.Contains(body, `"agents":"*"`) {
		t.Fatalf("session of a code: %d %s", st, body)
	}
	// Single use, and the TCP listener does not issue codes.
	if st, _, _ := newBrowser(t, b.base).do("GET", u.RequestURI(), "", nil); st != http.StatusUnauthorized {
		t.Fatalf("a used code: %d, want 401", st)
	}
	if st, _, _ := newBrowser(t, b.base).do("POST", daemon.CodeRoute, "", map[string]string{"Authorization": "Bearer tok-ada"}); st == 200 {
		t.Fatal("the TCP listener issued a login code")
	}
}

// adaClient calls the TCP API with Ada's token.
func adaCall(t *testing.T, td *testDaemon, method, path string, body any, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		buf, _ := json.Marshal(body)
		rd = bytes.NewReader(buf)
	}
	req, _ := http.NewRequest(method, "http://"+td.d.APIAddr()+path, rd)
	req.Header.Set("Authorization", "Bearer tok-ada")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
	if resp.StatusCode >= 300 {
		t.Logf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	return resp.StatusCode
}

// TestConsoleEvents: the pages' live stream is server-sent events of
// the agents the session may see.
func TestConsoleEvents(t *testing.T) {
	td := startConsole(t)
	b := newBrowser(t, "http://"+td.d.APIAddr())
	b.login("tok-bob")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", b.base+"/ui/api/events", nil)
	resp, err := b.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Scan() // the opening comment: the stream is subscribed
	if _, err := td.c.MemoryAppend(context.Background(), "other", api.AppendRequest{Text: "Not for Bob."}); err != nil {
		t.Fatal(err)
	}
	if _, err := td.c.MemoryAppend(context.Background(), "bot", api.AppendRequest{Text: "For Bob."}); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, `"agent":"other"`) {
			t.Fatalf("bob's stream carried another agent's event: %s", line)
		}
		if strings.HasPrefix(line, "data: ") && strings.Contains(line, `"agent":"bot"`) && strings.Contains(line, `"type":"write"`) {
			return
		}
	}
	t.Fatalf("no write event of bot: %v", sc.Err())
}
