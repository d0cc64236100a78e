package llm_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quirehq/quire/llm"
	"github.com/quirehq/quire/llm/llmtest"
)

const testKey = "sk-test-7f3a9c2e51b8d04f"

func newClient(t *testing.T, srv *llmtest.Server, stream bool, log *bytes.Buffer) *llm.Client {
	t.Helper()
	opts := llm.Options{URL: srv.URL, Model: "test-model", APIKey: testKey, Stream: stream,
		Timeout: 2 * time.Second, IdleTimeout: time.Second, Backoff: time.Millisecond, MaxWait: time.Second}
	if log != nil {
		opts.Logger = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	c, err := llm.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestComplete(t *testing.T) {
	long := strings.Repeat("Ünïcode and words. ", 50)
	tests := []struct {
		name     string
		stream   bool
		replies  []llmtest.Reply
		want     string
		wantErr  []string // substrings of the error
		requests int
	}{
		{name: "whole answer", replies: []llmtest.Reply{{Content: "hello"}}, want: "hello", requests: 1},
		{name: "streamed answer", stream: true, replies: []llmtest.Reply{{Content: long, Chunks: 9}}, want: long, requests: 1},
		{name: "slow stream within the idle timeout", stream: true,
			replies: []llmtest.Reply{{Content: "slow but steady", Chunks: 5, ChunkDelay: 300 * time.Millisecond}}, want: "slow but steady", requests: 1},
		{name: "429 with Retry-After, then an answer", replies: []llmtest.Reply{
			{Status: 429, ErrType: "requests", ErrCode: "rate_limit_exceeded", ErrMessage: "Rate limit reached", RetryAfter: "0.05"},
			{Content: "after the wait"}}, want: "after the wait", requests: 2},
		{name: "500, then an answer", replies: []llmtest.Reply{{Status: 500, ErrType: "server_error", ErrMessage: "The server had an error"}, {Content: "fine"}},
			want: "fine", requests: 2},
		{name: "503 every time", replies: []llmtest.Reply{{Status: 503, ErrType: "server_error", ErrMessage: "overloaded"}},
			wantErr: []string{"503 Service Unavailable", "overloaded"}, requests: 4},
		{name: "429 asking for longer than the client waits", replies: []llmtest.Reply{
			{Status: 429, ErrType: "requests", ErrCode: "rate_limit_exceeded", ErrMessage: "Rate limit reached", RetryAfter: "3600"}},
			wantErr: []string{"429 Too Many Requests", "rate_limit_exceeded", "wait 1h0m0s"}, requests: 1},
		{name: "400 is not retried", replies: []llmtest.Reply{{Status: 400, ErrType: "invalid_request_error", ErrMessage: "messages: too long"}},
			wantErr: []string{"400 Bad Request", "messages: too long"}, requests: 1},
		{name: "malformed JSON", replies: []llmtest.Reply{{Raw: `{"choices": [`}},
			wantErr: []string{"bad_answer", "not JSON", "OpenAI-compatible"}, requests: 1},
		{name: "an HTML page", replies: []llmtest.Reply{{Raw: "<html>login</html>", ContentType: "text/html"}},
			wantErr: []string{"bad_answer", "text/html", "<html>login"}, requests: 1},
		{name: "JSON that is not a completion", replies: []llmtest.Reply{{Raw: `{"data":[]}`}},
			wantErr: []string{"without choices[0].message.content"}, requests: 1},
		{name: "cut at the token limit", replies: []llmtest.Reply{{Content: "# SOUL", FinishReason: "length"}},
			wantErr: []string{"token limit"}, requests: 1},
		{name: "an empty answer", replies: []llmtest.Reply{{Content: "  "}}, wantErr: []string{"answered nothing"}, requests: 1},
		{name: "a stream cut short", stream: true, replies: []llmtest.Reply{{Content: "abcdefgh", CutStream: true}},
			wantErr: []string{"ended before data: [DONE]"}, requests: 1},
		{name: "a stream with a malformed chunk", stream: true, replies: []llmtest.Reply{{Raw: "data: {\"choices\":\n\ndata: [DONE]\n\n", ContentType: "text/event-stream"}},
			wantErr: []string{"not JSON"}, requests: 1},
		{name: "an error inside a stream", stream: true, replies: []llmtest.Reply{{Raw: "data: {\"error\":{\"message\":\"model crashed\",\"type\":\"server_error\"}}\n\n", ContentType: "text/event-stream"}},
			wantErr: []string{"model crashed"}, requests: 1},
		{name: "no headers within the idle timeout", replies: []llmtest.Reply{{Content: "late", Delay: 5 * time.Second}},
			wantErr: []string{"silent for 1s"}, requests: 4},
		{name: "a stream that talks past the timeout", stream: true,
			replies: []llmtest.Reply{{Content: "abcdefgh", Chunks: 8, ChunkDelay: 400 * time.Millisecond}}, wantErr: []string{"within 2s"}, requests: 4},
		{name: "a stream silent longer than the idle timeout", stream: true,
			replies: []llmtest.Reply{{Content: "abcd", Chunks: 2, ChunkDelay: 3 * time.Second}}, wantErr: []string{"silent for 1s"}, requests: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.New(tt.replies...)
			srv.Key = testKey
			defer srv.Close()
			var log bytes.Buffer
			got, err := newClient(t, srv, tt.stream, &log).Complete(context.Background(), []llm.Message{{Role: "user", Content: "hi"}})
			if tt.wantErr == nil {
				if err != nil || got != tt.want {
					t.Fatalf("Complete = %q, %v; want %q", got, err, tt.want)
				}
			} else {
				if err == nil {
					t.Fatalf("Complete = %q; want an error with %q", got, tt.wantErr)
				}
				for _, w := range append(tt.wantErr, srv.URL+"/v1/chat/completions") {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
			}
			if n := len(srv.Requests()); n != tt.requests {
				t.Errorf("server got %d requests, want %d", n, tt.requests)
			}
			for _, r := range srv.Requests() {
				if r.Auth != testKey || r.Model != "test-model" || r.Stream != tt.stream {
					t.Errorf("request %+v: want the key, test-model and stream %v", r, tt.stream)
				}
			}
			if strings.Contains(log.String(), testKey) || err != nil && strings.Contains(err.Error(), testKey) {
				t.Fatalf("the key appears in the log or the error:\n%s\n%v", log.String(), err)
			}
		})
	}
}

// A server that echoes a wrong key (as OpenAI does, masked) is reported
// without it; 401 is not retried and says where the key comes from.
func TestWrongKeyIsNeverShown(t *testing.T) {
	srv := llmtest.New()
	srv.Key = "sk-the-right-one"
	defer srv.Close()
	var log bytes.Buffer
	_, err := newClient(t, srv, false, &log).Complete(context.Background(), []llm.Message{{Role: "user", Content: "hi"}})
	var e *llm.Error
	if !errors.As(err, &e) || e.Status != http.StatusUnauthorized {
		t.Fatalf("err = %v; want a 401 *llm.Error", err)
	}
	for _, w := range []string{"401 Unauthorized", "invalid_api_key", "[redacted]", "--llm-key-file"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	if strings.Contains(err.Error(), testKey) || strings.Contains(log.String(), testKey) {
		t.Fatalf("the key appears: %v\n%s", err, log.String())
	}
}

func TestModelNotFound(t *testing.T) {
	srv := llmtest.New()
	srv.Model = "llama3.1"
	defer srv.Close()
	_, err := newClient(t, srv, false, nil).Complete(context.Background(), []llm.Message{{Role: "user", Content: "hi"}})
	if err == nil || !strings.Contains(err.Error(), "404 Not Found") || !strings.Contains(err.Error(), "--llm-model") {
		t.Fatalf("err = %v; want 404 naming --llm-model", err)
	}
}

// A request cancelled by its caller stops at once, also while waiting to
// retry.
func TestCancel(t *testing.T) {
	srv := llmtest.New(llmtest.Reply{Status: 429, ErrMessage: "slow down", RetryAfter: "0.9"})
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	c := newClient(t, srv, false, nil)
	done := make(chan error, 1)
	go func() {
		_, err := c.Complete(ctx, []llm.Message{{Role: "user", Content: "hi"}})
		done <- err
	}()
	for len(srv.Requests()) == 0 {
		time.Sleep(time.Millisecond) // the first answer is on its way
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v; want context.Canceled", err)
		}
	case <-time.After(500 * time.Millisecond):
		t.Fatal("Complete did not return after its context was cancelled")
	}
}

func TestEndpointURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://localhost:11434":                      "http://localhost:11434/v1/chat/completions",
		"https://api.openai.com/v1/":                  "https://api.openai.com/v1/chat/completions",
		"http://h:8000/v1/chat/completions":           "http://h:8000/v1/chat/completions",
		"https://example.com/openai/deployments/x/v1": "https://example.com/openai/deployments/x/v1/chat/completions",
		" http://localhost:8080 ":                     "http://localhost:8080/v1/chat/completions",
	} {
		if got := llm.EndpointURL(in); got != want {
			t.Errorf("EndpointURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNewRefuses(t *testing.T) {
	for _, o := range []llm.Options{{Model: "m"}, {URL: "http://x"}, {URL: "ftp://x", Model: "m"}, {URL: "http://user:" + testKey + "@:bad", Model: "m"}} {
		_, err := llm.New(o)
		if err == nil {
			t.Errorf("New(%+v) = nil error", o)
		} else if strings.Contains(err.Error(), testKey) {
			t.Errorf("New's error shows the key: %v", err)
		}
	}
	c, err := llm.New(llm.Options{URL: "https://user:" + testKey + "@example.com/v1", Model: "m"})
	if err != nil || strings.Contains(c.Endpoint(), testKey) {
		t.Fatalf("Endpoint = %v, %v; want it without the user information", c, err)
	}
}

func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "key")
	if err := os.WriteFile(file, []byte(testKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"OPENAI_API_KEY": "from-openai", "QUIRE_LLM_KEY": "from-quire"}
	tests := []struct {
		name, file string
		env        map[string]string
		want       string
		wantErr    bool
	}{
		{"file first", file, env, testKey, false},
		{"QUIRE_LLM_KEY before OPENAI_API_KEY", "", env, "from-quire", false},
		{"OPENAI_API_KEY", "", map[string]string{"OPENAI_API_KEY": "from-openai"}, "from-openai", false},
		{"none", "", nil, "", false},
		{"an empty file", empty, env, "", true},
		{"a missing file", filepath.Join(dir, "missing"), env, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := llm.LoadKey(tt.file, func(k string) string { return tt.env[k] })
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Fatalf("LoadKey = %q, %v; want %q (error %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
