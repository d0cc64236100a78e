package openai

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quirehq/quire/memory"
)

// server speaks the /v1/embeddings API: each input's vector is
// [len(input), index-in-request, 1]. It answers in reverse order to check
// that the client orders by index. fail makes the next n requests fail
// with the given status.
type server struct {
	*httptest.Server
	requests atomic.Int32
	failN    atomic.Int32
	status   int
	dims     int
	sizes    []int
}

func newServer(t *testing.T) *server {
	s := &server{status: http.StatusServiceUnavailable, dims: 3}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		if got := r.Header.Get("Authorization"); got != "Bearer k" {
			http.Error(w, `{"error":"bad key"}`, http.StatusUnauthorized)
			return
		}
		if s.failN.Load() > 0 {
			s.failN.Add(-1)
			http.Error(w, `{"error":"busy"}`, s.status)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "m" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		s.sizes = append(s.sizes, len(req.Input))
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i := len(req.Input) - 1; i >= 0; i-- {
			v := make([]float32, s.dims)
			v[0] = float32(len(req.Input[i]))
			if s.dims > 1 {
				v[1] = float32(i)
			}
			data = append(data, item{"embedding", i, v})
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
	}))
	t.Cleanup(s.Close)
	return s
}

func TestEmbedBatchesAndOrders(t *testing.T) {
	s := newServer(t)
	e, err := New(Options{URL: s.URL, Model: "m", APIKey: "k", Dimensions: 3, BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	vs, err := e.Embed(context.Background(), []string{"a", "bb", "ccc", "dddd", "eeeee"})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		if v[0] != float32(i+1) || v[1] != float32(i%2) {
			t.Errorf("vector %d = %v", i, v)
		}
	}
	if len(s.sizes) != 3 || s.sizes[0] != 2 || s.sizes[2] != 1 {
		t.Errorf("batch sizes = %v, want [2 2 1]", s.sizes)
	}
	var _ memory.Embedder = e
}

func TestProbeLearnsDimensions(t *testing.T) {
	s := newServer(t)
	e, _ := New(Options{URL: s.URL + "/v1/", Model: "m", APIKey: "k"})
	if e.Dimensions() != 0 {
		t.Fatal("dimensions before probe")
	}
	if err := e.Probe(context.Background()); err != nil {
		t.Fatal(err)
	}
	if e.Dimensions() != 3 {
		t.Errorf("dimensions = %d, want 3", e.Dimensions())
	}
}

func TestDimensionMismatch(t *testing.T) {
	s := newServer(t)
	e, _ := New(Options{URL: s.URL, Model: "m", APIKey: "k", Dimensions: 384})
	_, err := e.Embed(context.Background(), []string{"x"})
	if !errors.Is(err, memory.ErrDimensions) || !strings.Contains(err.Error(), s.URL+"/v1/embeddings") {
		t.Errorf("err = %v, want ErrDimensions naming the URL", err)
	}
}

func TestRetries(t *testing.T) {
	s := newServer(t)
	e, _ := New(Options{URL: s.URL, Model: "m", APIKey: "k", Dimensions: 3, Backoff: time.Millisecond})
	s.failN.Store(2)
	if _, err := e.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatalf("after two 503s: %v", err)
	}
	if got := s.requests.Load(); got != 3 {
		t.Errorf("requests = %d, want 3", got)
	}
	s.failN.Store(10)
	_, err := e.Embed(context.Background(), []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "4 attempts") || !strings.Contains(err.Error(), "HTTP 503") || !strings.Contains(err.Error(), s.URL) {
		t.Errorf("err = %v, want one naming URL, attempts and status", err)
	}
}

func TestNoRetryOnClientError(t *testing.T) {
	s := newServer(t)
	e, _ := New(Options{URL: s.URL, Model: "m", APIKey: "wrong", Dimensions: 3, Backoff: time.Millisecond})
	_, err := e.Embed(context.Background(), []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "HTTP 401") || s.requests.Load() != 1 {
		t.Errorf("err = %v after %d requests; want one 401", err, s.requests.Load())
	}
}

func TestTimeout(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(500 * time.Millisecond):
		}
	}))
	defer slow.Close()
	e, _ := New(Options{URL: slow.URL, Model: "m", Dimensions: 3, Timeout: 20 * time.Millisecond, Retries: -1})
	start := time.Now()
	_, err := e.Embed(context.Background(), []string{"x"})
	if err == nil || !strings.Contains(err.Error(), slow.URL) {
		t.Errorf("err = %v", err)
	}
	if time.Since(start) > time.Second {
		t.Errorf("timeout not applied")
	}
}

func TestBadAnswers(t *testing.T) {
	for name, body := range map[string]string{
		"too few":      `{"data":[]}`,
		"repeated":     `{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}`,
		"out of range": `{"data":[{"index":5,"embedding":[1]},{"index":0,"embedding":[1]}]}`,
		"not json":     `<html>`,
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(body)) }))
			defer srv.Close()
			e, _ := New(Options{URL: srv.URL, Model: "m", Dimensions: 1, Backoff: time.Millisecond})
			if _, err := e.Embed(context.Background(), []string{"a", "b"}); err == nil {
				t.Error("no error")
			}
		})
	}
}

func TestEndpointURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://h:11434":                "http://h:11434/v1/embeddings",
		"https://api.openai.com/v1/":    "https://api.openai.com/v1/embeddings",
		"http://h/custom/v1/embeddings": "http://h/custom/v1/embeddings",
	} {
		if got := EndpointURL(in); got != want {
			t.Errorf("EndpointURL(%q) = %q, want %q", in, got, want)
		}
	}
}
