// Package openai is the memory embedder for any OpenAI-compatible
// /v1/embeddings endpoint: OpenAI itself, Ollama, llama.cpp, vLLM, TEI. It
// batches texts, orders the answer by each item's index, checks dimensions,
// retries transient failures with exponential backoff (or the server's
// Retry-After), paces requests to a rate limit when given one, and names
// the URL in every error. It is one of the two memory packages allowed to use the
// network.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/quirehq/quire/memory"
)

// Options configures an Embedder. URL and Model are required.
type Options struct {
	// URL is the endpoint: a base such as http://localhost:11434 or
	// https://api.openai.com/v1, or the full …/v1/embeddings URL.
	URL string
	// Model is sent as "model" in every request.
	Model string
	// Dimensions is the expected vector length; 0 means learn it with Probe.
	Dimensions int
	// SendDimensions asks the server for Dimensions (OpenAI's
	// text-embedding-3 models can shorten their vectors); most servers
	// reject the field, so it is off by default.
	SendDimensions bool
	// APIKey, when set, is sent as a bearer token.
	APIKey string
	// BatchSize is the most texts per request; 0 means 64.
	BatchSize int
	// Timeout bounds each request; 0 means 30 s.
	Timeout time.Duration
	// Retries is how often a failed request is retried (network errors,
	// 429 and 5xx answers); 0 means 3, a negative value none.
	Retries int
	// Backoff is the first wait before a retry, doubled each time; 0 means 500 ms.
	Backoff time.Duration
	// Client is the HTTP client; nil means a new one.
	Client *http.Client
	// RequestsPerMinute and TokensPerMinute, when above 0, pace the
	// requests to stay within the endpoint's rate limits (tokens are
	// estimated as a quarter of the bytes), so a large backfill runs at
	// the endpoint's pace rather than into its 429 answers.
	RequestsPerMinute, TokensPerMinute int
}

// Embedder calls an OpenAI-compatible embeddings endpoint.
type Embedder struct {
	opts  Options
	url   string
	dims  atomic.Int64
	pacer *pacer
}

var _ memory.Embedder = (*Embedder)(nil)

// New returns an embedder for opts.
func New(opts Options) (*Embedder, error) {
	if opts.URL == "" {
		return nil, errors.New("openai embedder: no URL")
	}
	if opts.Model == "" {
		return nil, fmt.Errorf("openai embedder %s: no model", opts.URL)
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 64
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.Retries == 0 {
		opts.Retries = 3
	}
	if opts.Backoff <= 0 {
		opts.Backoff = 500 * time.Millisecond
	}
	if opts.Client == nil {
		opts.Client = &http.Client{}
	}
	e := &Embedder{opts: opts, url: EndpointURL(opts.URL), pacer: newPacer(opts.RequestsPerMinute, opts.TokensPerMinute)}
	e.dims.Store(int64(opts.Dimensions))
	return e, nil
}

// EndpointURL turns a base URL into the embeddings endpoint: a URL ending
// in /embeddings is kept, one ending in /v1 gets /embeddings, any other
// gets /v1/embeddings.
func EndpointURL(base string) string {
	u := strings.TrimRight(base, "/")
	switch {
	case strings.HasSuffix(u, "/embeddings"):
		return u
	case strings.HasSuffix(u, "/v1"):
		return u + "/embeddings"
	default:
		return u + "/v1/embeddings"
	}
}

// URL returns the endpoint the embedder posts to.
func (e *Embedder) URL() string { return e.url }

// Model returns the configured model name.
func (e *Embedder) Model() string { return e.opts.Model }

// Dimensions returns the vector length (0 before Probe when none was configured).
func (e *Embedder) Dimensions() int { return int(e.dims.Load()) }

// Probe embeds one short text to learn the vector length when none was
// configured, and to check that the endpoint answers.
func (e *Embedder) Probe(ctx context.Context) error {
	vs, err := e.request(ctx, []string{"dimension probe"})
	if err != nil {
		return err
	}
	if want := e.Dimensions(); want != 0 && len(vs[0]) != want {
		return fmt.Errorf("embed via %s: %w: model %s returned %d dimensions, configured %d", e.url, memory.ErrDimensions, e.opts.Model, len(vs[0]), want)
	}
	e.dims.Store(int64(len(vs[0])))
	return nil
}

// Embed returns one vector per text, in the order of texts.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if e.Dimensions() == 0 {
		if err := e.Probe(ctx); err != nil {
			return nil, err
		}
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += e.opts.BatchSize {
		batch := texts[start:min(start+e.opts.BatchSize, len(texts))]
		vs, err := e.request(ctx, batch)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			if len(v) != e.Dimensions() {
				return nil, fmt.Errorf("embed via %s: %w: model %s returned %d dimensions, configured %d", e.url, memory.ErrDimensions, e.opts.Model, len(v), e.Dimensions())
			}
		}
		out = append(out, vs...)
	}
	return out, nil
}

type request struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions,omitempty"`
}

type response struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// request posts one batch, retrying transient failures.
func (e *Embedder) request(ctx context.Context, texts []string) ([][]float32, error) {
	body := request{Model: e.opts.Model, Input: texts, EncodingFormat: "float"}
	if e.opts.SendDimensions {
		body.Dimensions = e.Dimensions()
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("embed via %s: encode request: %w", e.url, err)
	}
	wait := e.opts.Backoff
	tokens := estimateTokens(texts)
	for attempt := 0; ; attempt++ {
		if err := e.pacer.wait(ctx, tokens); err != nil {
			return nil, fmt.Errorf("embed via %s: %w", e.url, err)
		}
		vs, retryAfter, err := e.post(ctx, payload, len(texts))
		if err == nil {
			return vs, nil
		}
		var perm permanentError
		if errors.As(err, &perm) || attempt >= e.opts.Retries || ctx.Err() != nil {
			if attempt > 0 {
				return nil, fmt.Errorf("embed via %s (after %d attempts): %w", e.url, attempt+1, err)
			}
			return nil, fmt.Errorf("embed via %s: %w", e.url, err)
		}
		if retryAfter > wait {
			wait = retryAfter
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("embed via %s: %w (last error: %v)", e.url, ctx.Err(), err)
		case <-t.C:
		}
		wait *= 2
	}
}

// permanentError is a failure that a retry will not fix.
type permanentError struct{ err error }

func (p permanentError) Error() string { return p.err.Error() }
func (p permanentError) Unwrap() error { return p.err }

func (e *Embedder) post(ctx context.Context, payload []byte, n int) ([][]float32, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, e.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(payload))
	if err != nil {
		return nil, 0, permanentError{err}
	}
	req.Header.Set("Content-Type", "application/json")
	if e.opts.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.opts.APIKey)
	}
	resp, err := e.opts.Client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, 0, fmt.Errorf("read answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		err := fmt.Errorf("HTTP %d: %s", resp.StatusCode, snippet(data))
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			return nil, time.Duration(secs) * time.Second, err
		}
		return nil, 0, permanentError{err}
	}
	var r response
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, 0, permanentError{fmt.Errorf("decode answer: %w: %s", err, snippet(data))}
	}
	if len(r.Data) != n {
		return nil, 0, permanentError{fmt.Errorf("answer has %d embeddings for %d inputs", len(r.Data), n)}
	}
	out := make([][]float32, n)
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil {
			return nil, 0, permanentError{fmt.Errorf("answer has a bad or repeated index %d", d.Index)}
		}
		if d.Embedding == nil {
			d.Embedding = []float32{}
		}
		out[d.Index] = d.Embedding
	}
	return out, 0, nil
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
