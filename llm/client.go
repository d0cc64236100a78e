// Package llm is Quire's client of an OpenAI-compatible chat-completions
// endpoint (POST …/v1/chat/completions): OpenAI itself, Ollama,
// llama.cpp's server, vLLM. It sends one conversation and returns the
// assistant's answer, read whole or as a stream of server-sent events;
// it bounds each attempt with a timeout (and a stream's silence with
// another), retries network failures, 429 and 5xx answers after the
// server's Retry-After or an exponential backoff, and turns everything
// else into an *Error that names the endpoint and what to do. The API key
// is sent as a bearer token and never appears in an error or a log line:
// a server's message that echoes it is redacted.
//
// What Quire asks a model (summoning an agent, consolidating memory) is
// package draft's business; this package knows the protocol only.
package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Options configure a Client. URL and Model are required.
type Options struct {
	// URL is the endpoint: a base such as http://localhost:11434 (Ollama),
	// http://localhost:8080 (llama.cpp), https://api.openai.com/v1, or the
	// full …/v1/chat/completions URL.
	URL string
	// Model is sent as "model" in every request.
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer <key>".
	APIKey string
	// Stream asks for the answer as server-sent events (stream: true).
	Stream bool
	// Temperature, when not nil, is sent as "temperature".
	Temperature *float64
	// MaxTokens, when above 0, is sent as "max_tokens".
	MaxTokens int
	// Timeout bounds one attempt, the whole answer read; 0 means 5 min
	// (a local model writing several files is slow).
	Timeout time.Duration
	// IdleTimeout bounds the silence between two chunks of a stream (and
	// before the first); 0 means 1 min.
	IdleTimeout time.Duration
	// Retries is how often a failed attempt is retried (network errors,
	// 429, 500, 502, 503, 504); 0 means 3, a negative value none.
	Retries int
	// Backoff is the first wait before a retry, doubled each time; 0
	// means 1 s. A Retry-After header replaces it.
	Backoff time.Duration
	// MaxWait caps one wait before a retry, Retry-After included; 0
	// means 1 min. A server that asks for longer is answered with an
	// error saying when to try again.
	MaxWait time.Duration
	// Client is the HTTP client; nil means a new one.
	Client *http.Client
	// Logger receives a line per retry; nil discards.
	Logger *slog.Logger
}

// Message is one message of a conversation.
type Message struct {
	Role    string `json:"role"` // "system", "user" or "assistant"
	Content string `json:"content"`
}

// Client calls one chat-completions endpoint with one model. It is safe
// for concurrent use.
type Client struct {
	opts     Options
	endpoint string // the URL requests go to
	shown    string // the URL as errors and logs show it (no user info)
}

// New checks opts and returns a Client.
func New(opts Options) (*Client, error) {
	if strings.TrimSpace(opts.URL) == "" {
		return nil, errors.New("llm: no endpoint URL: give --llm-url, e.g. http://localhost:11434 (Ollama) or https://api.openai.com/v1")
	}
	if strings.TrimSpace(opts.Model) == "" {
		return nil, errors.New("llm: no model: give --llm-model, e.g. gpt-4o-mini or llama3.1")
	}
	endpoint := EndpointURL(opts.URL)
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("llm: endpoint URL %q is not an http(s) URL", redactURL(opts.URL))
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Minute
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = time.Minute
	}
	if opts.Retries == 0 {
		opts.Retries = 3
	}
	if opts.Backoff <= 0 {
		opts.Backoff = time.Second
	}
	if opts.MaxWait <= 0 {
		opts.MaxWait = time.Minute
	}
	if opts.Client == nil {
		opts.Client = &http.Client{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Client{opts: opts, endpoint: endpoint, shown: redactURL(endpoint)}, nil
}

// EndpointURL turns a base URL into the chat-completions URL: a URL that
// ends in /chat/completions is kept, one that ends in /v1 gets
// /chat/completions, any other /v1/chat/completions.
func EndpointURL(base string) string {
	base = strings.TrimRight(strings.TrimSpace(base), "/")
	switch {
	case strings.HasSuffix(base, "/chat/completions"):
		return base
	case strings.HasSuffix(base, "/v1"):
		return base + "/chat/completions"
	}
	return base + "/v1/chat/completions"
}

// Endpoint is the URL requests go to, as errors show it.
func (c *Client) Endpoint() string { return c.shown }

// Model is the model requests name.
func (c *Client) Model() string { return c.opts.Model }

// Complete sends msgs and returns the assistant's answer, retrying what
// may pass (see Options.Retries). Every error names the endpoint; an
// answer the server gave is an *Error.
func (c *Client) Complete(ctx context.Context, msgs []Message) (string, error) {
	if len(msgs) == 0 {
		return "", errors.New("llm: no messages to send")
	}
	body, err := c.requestBody(msgs)
	if err != nil {
		return "", err
	}
	wait := c.opts.Backoff
	for attempt := 0; ; attempt++ {
		answer, err := c.attempt(ctx, body)
		if err == nil {
			return answer, nil
		}
		if ctx.Err() != nil {
			return "", fmt.Errorf("POST %s: %w", c.shown, context.Cause(ctx))
		}
		d, retry := c.retryWait(err, wait)
		if !retry || c.opts.Retries < 0 || attempt >= c.opts.Retries {
			return "", err
		}
		c.opts.Logger.Warn("chat completion failed; retrying", "endpoint", c.shown, "model", c.opts.Model,
			"attempt", attempt+1, "wait", d, "err", err)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", fmt.Errorf("POST %s: %w (while waiting to retry after: %v)", c.shown, context.Cause(ctx), err)
		case <-t.C:
		}
		wait *= 2
	}
}

// retryWait says whether err may pass on a retry and how long to wait
// first: the server's Retry-After (capped by MaxWait) or backoff.
func (c *Client) retryWait(err error, backoff time.Duration) (time.Duration, bool) {
	var e *Error
	if !errors.As(err, &e) {
		return min(backoff, c.opts.MaxWait), true // the network
	}
	if !e.Temporary() {
		return 0, false
	}
	if e.RetryAfter > 0 {
		if e.RetryAfter > c.opts.MaxWait {
			return 0, false
		}
		return e.RetryAfter, true
	}
	return min(backoff, c.opts.MaxWait), true
}

// redactURL is u without its user information.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(an unparsable URL)"
	}
	if p.User != nil {
		p.User = nil
	}
	return p.String()
}
