package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// promptBackend answers every prompt with prompt, or fails with err.
type promptBackend struct {
	Backend
	prompt string
	err    error
}

func (b promptBackend) PromptJSON(context.Context, string, PromptRequest, []byte) ([]byte, error) {
	if b.err != nil {
		return nil, b.err
	}
	return Encode(PromptResponse{Prompt: b.prompt})
}

// TestAnswersKeepMarkup: answers and error bodies write <, > and & as
// themselves, not \u003c escapes, so that a prompt read with curl reads as
// written, and go out as application/json with nosniff, which no browser
// renders as a page (issue #22).
func TestAnswersKeepMarkup(t *testing.T) {
	const text = `<extra_context>R&D > "ops"</extra_context>`
	tests := []struct {
		name string
		b    promptBackend
		want string // in the body, verbatim
		code int
	}{
		{"answer", promptBackend{prompt: text}, `"prompt":"<extra_context>R&D > \"ops\"</extra_context>"`, http.StatusOK},
		{"error", promptBackend{err: Errorf(CodeBadRequest, "room %q: no such room", "<b>&")}, `room \"<b>&\": no such room`, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			req := httptest.NewRequestWithContext(context.Background(), "POST", "/v1/agents/bot/prompt", strings.NewReader("{}"))
			Handler(tt.b, Options{}).ServeHTTP(rec, req)
			body := rec.Body.String()
			if rec.Code != tt.code {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.code, body)
			}
			if !strings.Contains(body, tt.want) || strings.Contains(body, `\u00`) {
				t.Errorf("body %s, want %s verbatim and no \\u00 escapes", body, tt.want)
			}
			if ct, sniff := rec.Header().Get("Content-Type"), rec.Header().Get("X-Content-Type-Options"); ct != "application/json" || sniff != "nosniff" {
				t.Errorf("Content-Type %q, X-Content-Type-Options %q; want application/json and nosniff", ct, sniff)
			}
			if !strings.HasSuffix(body, "}\n") {
				t.Errorf("body %q does not end in one newline", body)
			}
			var v map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
				t.Errorf("body is not JSON: %v", err)
			}
		})
	}
	// Encode is what the daemon renders prompt answers with.
	b, err := Encode(PromptResponse{Prompt: text})
	if err != nil || !strings.Contains(string(b), tests[0].want) || strings.Contains(string(b), `\u00`) {
		t.Errorf("Encode = %s, %v; want %s verbatim", b, err, tests[0].want)
	}
}
