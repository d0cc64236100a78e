package daemon_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
)

// leakToken is the follower's git token: no answer, log line or error
// may hold it.
const leakToken = "gittok-5c1e0b9d8a7f4e2b"

// syncBuffer is a bytes.Buffer several goroutines write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestUpstreamCredentialNeverShown: a follower of a host that requires a
// token, given the token apart from the URL or (as the README once said)
// in it, fetches and pushes with it, and no surface shows it: the log,
// GET /v1/status and /v1/agents (to a bearer token scoped to the agent),
// /v1/events, /metrics, the webhook's answer, MCP answers, the 503 of a
// write the upstream did not take, the status while fetches fail, the
// client's errors, nor anything the daemon wrote to its cache directory.
func TestUpstreamCredentialNeverShown(t *testing.T) {
	t.Parallel()
	host := startDaemon(t, daemon.Options{GitTokens: []daemon.GitToken{{User: "follower", Token: leakToken}}})
	hostURL, _ := url.Parse(host.remote)
	wt := newWorkTree(t, botFiles)
	git(t, wt, "push", "-q", "http://follower:"+leakToken+"@"+hostURL.Host+"/bot.git", "main")
	if out, err := gitMay(wt, "push", host.remote+"/bot.git", "main"); err == nil {
		t.Fatalf("the host took a push without the token: %s", out)
	}

	for _, tc := range []struct {
		name  string
		inURL bool   // the credential in the URL, else apart
		via   string // what writes while the upstream refuses: "api" or "mcp"
	}{
		{"credential apart", false, "api"},
		{"credential in the URL", true, "mcp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// The upstream as the follower reaches it: a proxy that, when
			// told to, refuses every request as a server that revoked the
			// token would (echoing what it was sent, as a careless one
			// might).
			rp := httputil.NewSingleHostReverseProxy(hostURL)
			var deny atomic.Bool
			proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if deny.Load() {
					u, p, _ := r.BasicAuth()
					w.Header().Set("WWW-Authenticate", `Basic realm="quire"`)
					http.Error(w, "revoked: "+u+":"+p, http.StatusUnauthorized)
					return
				}
				r.Host = hostURL.Host
				rp.ServeHTTP(w, r)
			}))
			t.Cleanup(proxy.Close)
			plainURL := proxy.URL + "/bot.git"
			upstream, cred := plainURL, "follower:"+leakToken
			if tc.inURL {
				upstream, cred = strings.Replace(plainURL, "://", "://"+cred+"@", 1), ""
			}

			var logs syncBuffer
			cache := filepath.Join(shortTempDir(t), "cache")
			f := startDaemon(t, daemon.Options{Upstream: upstream, UpstreamCredential: cred, Poll: 200 * time.Millisecond,
				CacheDir: cache, APIListen: "127.0.0.1:0", Tokens: api.Tokens{"tok-bot": {"bot"}}, WebhookSecret: []byte(hookSecret),
				Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			var seen bytes.Buffer // every answer and error, grepped at the end
			note := func(parts ...string) {
				for _, p := range parts {
					seen.WriteString(p + "\n")
				}
			}
			events := streamEvents(t, f)

			ctx := context.Background()
			waitFor(t, "the follower to deploy", func() bool { _, err := f.c.Prompt(ctx, "bot", api.PromptRequest{}); return err == nil })
			// Writes go to the host with the credential.
			text := "WRITTEN-THROUGH-" + strings.ReplaceAll(tc.name, " ", "-")
			if _, err := f.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: text}); err != nil {
				t.Fatalf("a write through the upstream: %v", err)
			}
			git(t, filepath.Join(host.repos, "bot.git"), "grep", "-q", text, "live", "--", "memory") // fails when it is not there

			tcp := "http://" + f.d.APIAddr()
			for _, path := range []string{"/v1/status", "/v1/agents", "/metrics"} {
				_, _, body := f.raw(t, http.MethodGet, path, nil, "")
				code, b := bearerGet(t, tcp+path, "tok-bot")
				note(path, body, code, b)
			}
			if _, _, body := f.raw(t, http.MethodGet, "/v1/status", nil, ""); !strings.Contains(body, "upstream:"+plainURL) {
				t.Errorf("the status does not name the upstream by its URL without the credential: %s", body)
			}
			status, hook := post(t, f, githubHook(hookSecret, githubPush(plainURL, "refs/heads/main")))
			if status != http.StatusAccepted || !strings.Contains(hook, "upstream:"+plainURL) {
				t.Errorf("webhook: %d %s, want 202 naming the upstream", status, hook)
			}
			note(hook)
			mcp := newMCPSession(t, tcp+"/mcp", "tok-bot")
			note(mcp.call(t, `{"name":"memory_append","arguments":{"text":"through MCP"}}`))

			// The upstream refuses everything: writes fail, fetches fail,
			// and the status says so.
			deny.Store(true)
			if tc.via == "api" {
				code, _, body := f.raw(t, http.MethodPost, "/v1/agents/bot/memory/append", nil, `{"text":"refused"}`)
				if code != http.StatusServiceUnavailable || !strings.Contains(body, "upstream_unavailable") {
					t.Errorf("a write the upstream refused: %d %s, want 503 upstream_unavailable", code, body)
				}
				note(body)
			} else {
				body := mcp.call(t, `{"name":"memory_append","arguments":{"text":"refused"}}`)
				if !strings.Contains(body, "upstream") || !strings.Contains(body, `"isError":true`) {
					t.Errorf("MCP's answer to a write the upstream refused does not say so: %s", body)
				}
				note(body)
			}
			waitFor(t, "the status to show the failing fetch", func() bool {
				st, err := f.c.Status(ctx)
				return err == nil && len(st.Agents) > 0 && strings.Contains(st.Agents[0].LastError, "upstream:")
			})
			_, _, body := f.raw(t, http.MethodGet, "/v1/status", nil, "")
			code, b := bearerGet(t, tcp+"/v1/status", "tok-bot")
			note(body, code, b)
			deny.Store(false)
			f.stop()

			note(logs.String(), events.String())
			if strings.Contains(seen.String(), leakToken) {
				t.Fatalf("the token is shown:\n%s", excerpt(seen.String(), leakToken))
			}
			if !strings.Contains(seen.String(), "upstream:"+plainURL) {
				t.Errorf("nothing named the upstream: the test grepped nothing?\n%s", seen.String())
			}
			warned := strings.Contains(logs.String(), "--upstream-credential-file")
			if warned != tc.inURL {
				t.Errorf("the log warns about the URL's credential: %v, want %v\n%s", warned, tc.inURL, logs.String())
			}
			// Nothing on disk either (git config, FETCH_HEAD, reflogs).
			err := filepath.Walk(cache, func(p string, fi os.FileInfo, err error) error {
				if err != nil || fi.IsDir() {
					return err
				}
				b, err := os.ReadFile(p)
				if err == nil && bytes.Contains(b, []byte(leakToken)) {
					t.Errorf("%s holds the token", p)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// excerpt shows where s holds sub.
func excerpt(s, sub string) string {
	var out []string
	for line := range strings.Lines(s) {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "")
}

// bearerGet gets url with a bearer token and returns the status and
// body.
func bearerGet(t *testing.T, url, token string) (string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.Status, string(b)
}

// streamEvents reads the daemon's /v1/events until the test ends.
func streamEvents(t *testing.T, td *testDaemon) *syncBuffer {
	t.Helper()
	out := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", td.c.Socket)
	}}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://quire/v1/events", nil)
	resp, err := hc.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(out, resp.Body)
		resp.Body.Close()
	}()
	t.Cleanup(func() { cancel(); <-done })
	return out
}

// mcpSession is a raw MCP session over streamable HTTP.
type mcpSession struct {
	url, token, id string
}

func newMCPSession(t *testing.T, url, token string) *mcpSession {
	t.Helper()
	s := &mcpSession{url: url, token: token}
	resp := s.post(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	s.id = resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || s.id == "" {
		t.Fatalf("MCP initialize: %s", resp.Status)
	}
	s.post(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

func (s *mcpSession) post(t *testing.T, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	req.Header.Set("Authorization", "Bearer "+s.token)
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return &http.Response{Body: io.NopCloser(strings.NewReader(""))}
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp
}

// call calls a tool (params: its name and arguments) and returns the
// answer's body.
func (s *mcpSession) call(t *testing.T, params string) string {
	t.Helper()
	resp := s.post(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":`+params+`}`)
	b, _ := io.ReadAll(resp.Body)
	return resp.Status + " " + string(b)
}
