package main

import (
	"log/slog"
	"runtime/debug"
	"testing"
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
