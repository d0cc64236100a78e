package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// TestTuneGC: quire serve keeps the runtime's GOGC and sets a soft memory
// limit only in a container with a memory limit, unless GOGC or
// GOMEMLIMIT chose otherwise.
func TestTuneGC(t *testing.T) {
	pct := debug.SetGCPercent(100)
	limit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(pct); debug.SetMemoryLimit(limit) })
	const noLimit = int64(^uint64(0) >> 1) // math.MaxInt64: the runtime's "none"
	inContainer := containerMemoryLimit() > 0
	tests := []struct {
		env       map[string]string
		gogc      int // as the runtime read it from the environment
		wantLimit bool
	}{
		{map[string]string{}, 100, inContainer},
		{map[string]string{"GOGC": "50"}, 50, inContainer},
		{map[string]string{"GOMEMLIMIT": "1GiB"}, 100, false},
	}
	for _, tt := range tests {
		debug.SetGCPercent(tt.gogc)
		debug.SetMemoryLimit(noLimit)
		tuneGC(func(k string) string { return tt.env[k] }, slog.New(slog.DiscardHandler))
		if got := debug.SetGCPercent(100); got != tt.gogc {
			t.Errorf("env %v: GOGC %d, want %d", tt.env, got, tt.gogc)
		}
		if l := debug.SetMemoryLimit(-1); (l != noLimit) != tt.wantLimit {
			t.Errorf("env %v: memory limit %d, want set=%v", tt.env, l, tt.wantLimit)
		}
	}
}

// fakeIndexer is a daemon as returnStartupMemory sees it.
type fakeIndexer struct {
	ready   chan struct{}
	indexed chan error
}

func (f *fakeIndexer) Ready() <-chan struct{} { return f.ready }
func (f *fakeIndexer) WaitIndexed(ctx context.Context) error {
	select {
	case err := <-f.indexed:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestReturnStartupMemory: the start-up's memory is returned (and said
// so) once the daemon is ready and indexed, not when indexing failed or
// the daemon stopped first.
func TestReturnStartupMemory(t *testing.T) {
	tests := []struct {
		name    string
		ready   bool
		indexed error
		stop    bool
		logged  bool
	}{
		{"indexed", true, nil, false, true},
		{"indexing failed", true, errors.New("store away"), false, false},
		{"stopped before ready", false, nil, true, false},
		{"stopped before indexed", true, nil, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeIndexer{ready: make(chan struct{}), indexed: make(chan error, 1)}
			if tt.ready {
				close(f.ready)
			}
			ctx, cancel := context.WithCancel(context.Background())
			if tt.stop {
				cancel()
			} else {
				f.indexed <- tt.indexed
			}
			defer cancel()
			var buf bytes.Buffer
			returnStartupMemory(ctx, f, time.Now(), slog.New(slog.NewTextHandler(&buf, nil)))
			if got := strings.Contains(buf.String(), "memory returned"); got != tt.logged {
				t.Errorf("logged %v, want %v: %q", got, tt.logged, buf.String())
			}
		})
	}
}
