package main

import (
	"log/slog"
	"runtime/debug"
	"testing"
)

// TestTuneGC: quire serve runs the collector at serveGCPercent with a
// soft memory limit, unless GOGC or GOMEMLIMIT chose otherwise.
func TestTuneGC(t *testing.T) {
	pct := debug.SetGCPercent(100)
	limit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(pct); debug.SetMemoryLimit(limit) })
	const noLimit = int64(^uint64(0) >> 1) // math.MaxInt64: the runtime's "none"
	tests := []struct {
		env       map[string]string
		wantPct   int
		wantLimit bool
	}{
		{map[string]string{}, serveGCPercent, physicalMemory() > 0},
		{map[string]string{"GOGC": "100"}, 100, physicalMemory() > 0},
		{map[string]string{"GOMEMLIMIT": "1GiB"}, serveGCPercent, false},
	}
	for _, tt := range tests {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(noLimit)
		tuneGC(func(k string) string { return tt.env[k] }, slog.New(slog.DiscardHandler))
		got := debug.SetGCPercent(100)
		if got != tt.wantPct {
			t.Errorf("env %v: GOGC %d, want %d", tt.env, got, tt.wantPct)
		}
		if l := debug.SetMemoryLimit(-1); (l != noLimit) != tt.wantLimit {
			t.Errorf("env %v: memory limit %d, want set=%v", tt.env, l, tt.wantLimit)
		}
	}
}
