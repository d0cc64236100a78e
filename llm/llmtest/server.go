// Package llmtest is a chat-completions server for tests: it implements
// POST /v1/chat/completions as OpenAI documents it (bearer key, JSON
// request with model and messages, a completion or an SSE stream of
// chunks ending in data: [DONE], errors as {"error":{"message","type",
// "param","code"}} with their statuses) and answers from a script, so
// the client, summoning and consolidation are tested without a model.
package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Reply is one scripted answer.
type Reply struct {
	// Content is the assistant's answer.
	Content string
	// Status, when not 0 or 200, answers with that status and an OpenAI
	// error body of ErrType, ErrCode and ErrMessage.
	Status                       int
	ErrType, ErrCode, ErrMessage string
	// RetryAfter is sent as the Retry-After header.
	RetryAfter string
	// Raw, when set, is sent as the body as it is, with ContentType
	// (default application/json).
	Raw, ContentType string
	// Delay holds the answer back (before the headers).
	Delay time.Duration
	// ChunkDelay, for a stream, waits between chunks; Chunks is how many
	// pieces Content is sent in (default 4).
	ChunkDelay time.Duration
	Chunks     int
	// FinishReason is the choice's finish_reason (default "stop").
	FinishReason string
	// CutStream ends a stream after its first chunk, without [DONE].
	CutStream bool
}

// Request is a request the server received.
type Request struct {
	Auth     string
	Model    string
	Messages []struct{ Role, Content string }
	Stream   bool
}

// Server is the test server.
type Server struct {
	*httptest.Server
	// Key, when set, is the API key the server requires.
	Key string
	// Model, when set, is the only model the server has.
	Model string

	mu       sync.Mutex
	script   []Reply
	fallback *Reply
	requests []Request
	stop     chan struct{}
}

// New starts a server that answers with replies in order, then with the
// last one again.
func New(replies ...Reply) *Server {
	s := &Server{stop: make(chan struct{})}
	s.script = replies
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Close stops the server, ending answers held back.
func (s *Server) Close() {
	s.mu.Lock()
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	s.mu.Unlock()
	s.Server.Close()
}

// Script replaces the replies still to come.
func (s *Server) Script(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script, s.fallback = replies, nil
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) next() Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.script) > 0 {
		r := s.script[0]
		s.script = s.script[1:]
		s.fallback = &r
		return r
	}
	if s.fallback != nil {
		return *s.fallback
	}
	return Reply{Content: "ok"}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		writeError(w, http.StatusNotFound, "invalid_request_error", "unknown_url", "Unknown request URL: "+r.Method+" "+r.URL.Path)
		return
	}
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "", "method not allowed")
		return
	}
	auth := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if s.Key != "" && auth != s.Key {
		// OpenAI names the key it got; this server echoes it whole, so a
		// test sees that the client never repeats it.
		writeError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", "Incorrect API key provided: "+auth+".")
		return
	}
	var req struct {
		Model    string                           `json:"model"`
		Messages []struct{ Role, Content string } `json:"messages"`
		Stream   bool                             `json:"stream"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", "We could not parse the JSON body of your request: "+err.Error())
		return
	}
	if req.Model == "" || len(req.Messages) == 0 {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", "you must provide a model parameter and messages")
		return
	}
	if s.Model != "" && req.Model != s.Model {
		writeError(w, http.StatusNotFound, "invalid_request_error", "model_not_found", fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", req.Model))
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, Request{Auth: auth, Model: req.Model, Messages: req.Messages, Stream: req.Stream})
	s.mu.Unlock()
	s.answer(w, r, req.Model, req.Stream, s.next())
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request, model string, stream bool, rep Reply) {
	if !s.wait(r, rep.Delay) {
		return
	}
	if rep.RetryAfter != "" {
		w.Header().Set("Retry-After", rep.RetryAfter)
	}
	switch {
	case rep.Status != 0 && rep.Status != http.StatusOK:
		writeError(w, rep.Status, rep.ErrType, rep.ErrCode, rep.ErrMessage)
	case rep.Raw != "":
		ct := rep.ContentType
		if ct == "" {
			ct = "application/json"
		}
		w.Header().Set("Content-Type", ct)
		_, _ = w.Write([]byte(rep.Raw))
	case stream:
		s.stream(w, r, model, rep)
	default:
		finish := rep.FinishReason
		if finish == "" {
			finish = "stop"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-test", "object": "chat.completion", "created": 1700000000, "model": model,
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": rep.Content}, "finish_reason": finish}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
		})
	}
}

// stream sends rep.Content as chat.completion.chunk events.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, model string, rep Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fl, _ := w.(http.Flusher)
	send := func(delta map[string]any, finish any) {
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1700000000, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	send(map[string]any{"role": "assistant", "content": ""}, nil)
	n := rep.Chunks
	if n <= 0 {
		n = 4
	}
	for i, piece := range split(rep.Content, n) {
		if i > 0 && !s.wait(r, rep.ChunkDelay) {
			return
		}
		send(map[string]any{"content": piece}, nil)
		if rep.CutStream {
			return
		}
	}
	finish := rep.FinishReason
	if finish == "" {
		finish = "stop"
	}
	send(map[string]any{}, finish)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// wait waits d, or less when the client goes or the server closes.
func (s *Server) wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
	case <-s.stop:
	}
	return false
}

// split cuts s into n pieces of about equal length, on rune boundaries.
func split(s string, n int) []string {
	rs := []rune(s)
	var out []string
	size := (len(rs) + n - 1) / n
	if size == 0 {
		return []string{""}
	}
	for i := 0; i < len(rs); i += size {
		out = append(out, string(rs[i:min(i+size, len(rs))]))
	}
	return out
}

func writeError(w http.ResponseWriter, status int, typ, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	var c any
	if code != "" {
		c = code
	}
	if msg == "" {
		msg = strconv.Itoa(status) + " " + http.StatusText(status)
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": c}})
}
