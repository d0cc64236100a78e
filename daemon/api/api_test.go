package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestParseTokens(t *testing.T) {
	tests := []struct {
		name, in string
		want     Tokens
		wantErr  bool
	}{
		{"empty", "", Tokens{}, false},
		{"comments and blanks", "# c\n\n  \nt1 *\n", Tokens{"t1": {"*"}}, false},
		{"commas and spaces", "t1 a,b c\nt2\tz\n", Tokens{"t1": {"a", "b", "c"}, "t2": {"z"}}, false},
		{"token without agents", "lonely\n", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTokens(strings.NewReader(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if !tt.wantErr && !equalTokens(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func equalTokens(a, b Tokens) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if strings.Join(v, ",") != strings.Join(b[k], ",") {
			return false
		}
	}
	return true
}

func TestTokensAllows(t *testing.T) {
	tk := Tokens{"all": {"*"}, "one": {"bot"}}
	tests := []struct {
		token, agent string
		want         bool
	}{
		{"all", "bot", true}, {"all", "", true}, {"one", "bot", true}, {"one", "other", false},
		{"one", "", true}, {"nope", "", false}, {"", "bot", false},
	}
	for _, tt := range tests {
		if got := tk.Allows(tt.token, tt.agent); got != tt.want {
			t.Errorf("Allows(%q, %q) = %v, want %v", tt.token, tt.agent, got, tt.want)
		}
	}
	for tok, want := range map[string]bool{"all": true, "one": false, "al": false, "alll": false, "": false} {
		if got := tk.AllowsAll(tok); got != want {
			t.Errorf("AllowsAll(%q) = %v, want %v", tok, got, want)
		}
	}
}

func FuzzParseTokens(f *testing.F) {
	f.Add("t1 *\n# x\nt2 a,b\n")
	f.Add("\x00 \xff\n")
	f.Fuzz(func(t *testing.T, in string) {
		tk, err := ParseTokens(strings.NewReader(in))
		if err != nil {
			return
		}
		for tok, agents := range tk {
			if tok == "" || len(agents) == 0 {
				t.Fatalf("token %q with agents %v", tok, agents)
			}
		}
	})
}

// TestErrorsAreJSON: every failure answers {"error":{"code","message"}}
// with a fitting status, before a backend is even reached.
func TestErrorsAreJSON(t *testing.T) {
	h := Handler(nil, Options{Tokens: Tokens{"t": {"bot"}}})
	tests := []struct {
		method, path, token, body string
		want                      int
	}{
		{"GET", "/v1/nothing", "t", "", http.StatusNotFound},
		{"GET", "/v1/status", "", "", http.StatusUnauthorized},
		{"GET", "/metrics", "t", "", http.StatusForbidden},
		{"GET", "/v1/status", "t-longer", "", http.StatusUnauthorized},
		{"GET", "/v1/status", "T", "", http.StatusUnauthorized},
		{"POST", "/v1/agents/other/prompt", "t", "{}", http.StatusForbidden},
		{"PUT", "/v1/agents/bot/files/MEMORY.md", "t", "x", http.StatusPreconditionRequired},
		{"POST", "/v1/agents/bot/prompt", "t", "{not json", http.StatusBadRequest},
		{"POST", "/v1/agents/bot/prompt", "t", `{"unknown_field":1}`, http.StatusBadRequest},
		{"POST", "/v1/agents/bot/memory/search", "t", `{"query":"x"} GARBAGE`, http.StatusBadRequest},
		{"POST", "/v1/agents/bot/memory/search", "t", `{"query":"x"}{"query":"y"}`, http.StatusBadRequest},
		{"POST", "/v1/agents/bot/memory/search", "t", `{"query":"  "}`, http.StatusBadRequest},
		{"POST", "/v1/agents/bot/memory/flush-plan", "t", `{"total_tokens":5}`, http.StatusBadRequest},
	}
	for _, tt := range tests {
		req := httptest.NewRequestWithContext(context.Background(), tt.method, tt.path, strings.NewReader(tt.body))
		if tt.token != "" {
			req.Header.Set("Authorization", "Bearer "+tt.token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var eb ErrorBody
		if rec.Code != tt.want || json.Unmarshal(rec.Body.Bytes(), &eb) != nil || eb.Error.Code == "" || eb.Error.Message == "" {
			t.Errorf("%s %s: %d %s, want %d with an error body", tt.method, tt.path, rec.Code, rec.Body, tt.want)
		}
	}
}

// TestRouteTable: the routes the local API promises (docs/api.md) are
// all in the one table.
func TestRouteTable(t *testing.T) {
	want := []string{
		"GET /v1/status", "GET /v1/agents", "POST /v1/agents/{agent}/prompt",
		"POST /v1/agents/{agent}/memory/search", "GET /v1/agents/{agent}/files/{path...}",
		"PUT /v1/agents/{agent}/files/{path...}", "POST /v1/agents/{agent}/memory/append",
		"POST /v1/agents/{agent}/skills/search", "GET /v1/agents/{agent}/skills",
		"GET /v1/agents/{agent}/skills/{name}", "POST /v1/agents/{agent}/memory/flush-plan",
		"GET /v1/events", "GET /metrics", "GET /v1/openapi.json",
	}
	have := map[string]bool{}
	for _, r := range routes {
		have[r.pattern] = true
	}
	for _, w := range want {
		if !have[w] {
			t.Errorf("route %q missing from the route table", w)
		}
	}
}

// TestWrongMethod: a known path with the wrong method is a JSON 405.
func TestWrongMethod(t *testing.T) {
	h := Handler(nil, Options{})
	for _, tt := range []struct{ method, path string }{
		{"GET", "/v1/agents/bot/prompt"}, {"PATCH", "/v1/agents/bot/files/MEMORY.md"}, {"POST", "/v1/status"},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequestWithContext(context.Background(), tt.method, tt.path, nil))
		var eb ErrorBody
		if rec.Code != http.StatusMethodNotAllowed || json.Unmarshal(rec.Body.Bytes(), &eb) != nil || eb.Error.Code != "method_not_allowed" {
			t.Errorf("%s %s: %d %s", tt.method, tt.path, rec.Code, rec.Body)
		}
	}
}
