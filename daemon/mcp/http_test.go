package mcp

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

type httpAnswer struct {
	status  int
	body    string
	session string
}

// post sends one JSON-RPC message to url with token and session ("" for
// none).
func post(t *testing.T, url, token, session, body string) httpAnswer {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return httpAnswer{}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return httpAnswer{resp.StatusCode, string(b), resp.Header.Get("Mcp-Session-Id")}
}

func initialize(t *testing.T, url, token string) httpAnswer {
	return post(t, url, token, "", initLine(1, "2025-06-18"))
}

// liveSessions counts the SDK's sessions in every server of h: what
// holds memory.
func liveSessions(h *handler) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, e := range h.servers {
		for range e.srv.Sessions() {
			n++
		}
	}
	return n
}

// TestRequestsWithoutSession: over HTTP a request before initialize is
// answered -32600 with its id, and a batch is refused; neither opens a
// session.
func TestRequestsWithoutSession(t *testing.T) {
	h := Handler(&fakeBackend{}, HTTPOptions{}).(*handler)
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, c := range []struct {
		body   string
		status int
		has    string
	}{
		{`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, http.StatusBadRequest, `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"invalid request: tools/list before initialize`},
		{`{"jsonrpc":"2.0","id":6,"method":"prompts/get","params":{"name":"system_prompt"}}`, http.StatusBadRequest, `"id":6,"error":{"code":-32600`},
		{`[` + initLine(1, "2025-03-26") + `]`, http.StatusBadRequest, `"id":null,"error":{"code":-32600,"message":"invalid request: a JSON-RPC batch`},
		{`{"jsonrpc":"2.0","id":7,"method":"ping"}`, http.StatusOK, `"id":7,"result":{}`},
	} {
		a := post(t, srv.URL+Path, "", "", c.body)
		if a.status != c.status || !strings.Contains(a.body, c.has) {
			t.Errorf("%s: %d %s, want %d with %s", c.body, a.status, a.body, c.status, c.has)
		}
	}
	if n := liveSessions(h); n != 0 {
		t.Errorf("%d SDK sessions live after requests without a session; want 0", n)
	}
}
