package openai

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// fakeClock is a pacer's clock that sleeping moves forward, recording
// each wait.
type fakeClock struct {
	t     time.Time
	waits []time.Duration
}

func (c *fakeClock) pacer(rpm, tpm int) *pacer {
	p := newPacer(rpm, tpm)
	p.now = func() time.Time { return c.t }
	p.sleep = func(_ context.Context, d time.Duration) error {
		c.waits = append(c.waits, d)
		c.t = c.t.Add(d)
		return nil
	}
	return p
}

func TestPacerSpacesRequests(t *testing.T) {
	tests := []struct {
		name     string
		rpm, tpm int
		tokens   []int
		want     []time.Duration
	}{
		{"unlimited", 0, 0, []int{1, 1, 1}, nil},
		{"60 requests a minute", 60, 0, []int{1, 1, 1}, []time.Duration{time.Second, time.Second}},
		{"tokens decide", 600, 1000, []int{500, 100}, []time.Duration{30 * time.Second}},
		{"requests decide", 6, 1_000_000, []int{10, 10}, []time.Duration{10 * time.Second}},
	}
	for _, tt := range tests {
		c := &fakeClock{t: time.Unix(0, 0)}
		p := c.pacer(tt.rpm, tt.tpm)
		for _, n := range tt.tokens {
			if err := p.wait(context.Background(), n); err != nil {
				t.Fatal(err)
			}
		}
		if len(c.waits) != len(tt.want) {
			t.Errorf("%s: waits %v, want %v", tt.name, c.waits, tt.want)
			continue
		}
		for i := range tt.want {
			if c.waits[i] != tt.want[i] {
				t.Errorf("%s: waits %v, want %v", tt.name, c.waits, tt.want)
				break
			}
		}
	}
}

func TestPacerIdleTimeIsNotBanked(t *testing.T) {
	c := &fakeClock{t: time.Unix(0, 0)}
	p := c.pacer(60, 0)
	p.wait(context.Background(), 1)
	c.t = c.t.Add(time.Hour) // idle
	p.wait(context.Background(), 1)
	p.wait(context.Background(), 1)
	if len(c.waits) != 1 || c.waits[0] != time.Second {
		t.Errorf("after an idle hour waits %v, want one of 1s (no burst)", c.waits)
	}
}

func TestPacedEmbedderStopsWithContext(t *testing.T) {
	s := newServer(t)
	e, err := New(Options{URL: s.URL, Model: "m", APIKey: "k", Dimensions: 3, RequestsPerMinute: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(context.Background(), []string{"a"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = e.Embed(ctx, []string{"b"}) // would wait a minute
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), s.URL) {
		t.Errorf("paced request after cancel: %v; want context.Canceled naming the URL", err)
	}
	if n := s.requests.Load(); n != 1 {
		t.Errorf("%d requests reached the server; want 1", n)
	}
}

func TestEstimateTokens(t *testing.T) {
	if got := estimateTokens([]string{"", strings.Repeat("x", 400)}); got != 1+101 {
		t.Errorf("estimateTokens = %d, want 102", got)
	}
}
