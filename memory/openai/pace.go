package openai

import (
	"context"
	"sync"
	"time"
)

// pacer spaces requests so that they stay within an endpoint's rate
// limits: each request takes a slot of 1/RequestsPerMinute of a minute
// and its estimated tokens' share of TokensPerMinute, whichever is
// longer, after the slots already handed out (virtual scheduling, with
// no burst). A 100k-chunk backfill then runs at the endpoint's pace
// instead of into its 429s. The zero pacer never waits.
type pacer struct {
	rpm, tpm int
	now      func() time.Time
	sleep    func(ctx context.Context, d time.Duration) error

	mu   sync.Mutex
	next time.Time // when the next slot starts
}

func newPacer(rpm, tpm int) *pacer {
	return &pacer{rpm: max(rpm, 0), tpm: max(tpm, 0), now: time.Now, sleep: sleepCtx}
}

// estimateTokens is a text's token count as the endpoints' tokenizers
// roughly count English: a token per four bytes, at least one.
func estimateTokens(texts []string) int {
	n := 0
	for _, t := range texts {
		n += len(t)/4 + 1
	}
	return n
}

// wait blocks until a request of tokens may be sent, or ctx ends.
func (p *pacer) wait(ctx context.Context, tokens int) error {
	if p == nil || (p.rpm == 0 && p.tpm == 0) {
		return nil
	}
	var slot time.Duration
	if p.rpm > 0 {
		slot = time.Minute / time.Duration(p.rpm)
	}
	if p.tpm > 0 {
		slot = max(slot, time.Duration(float64(time.Minute)*float64(tokens)/float64(p.tpm)))
	}
	p.mu.Lock()
	now := p.now()
	start := p.next
	if start.Before(now) {
		start = now
	}
	p.next = start.Add(slot)
	p.mu.Unlock()
	if d := start.Sub(now); d > 0 {
		return p.sleep(ctx, d)
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
