package main

import (
	"context"
	"log/slog"
	"runtime"
	"runtime/debug"
	"time"
)

// containerLimitShare is the part of a container's memory limit that
// `quire serve` makes the garbage collector's soft limit (in percent):
// the collector works harder as the heap nears it, well before the
// kernel would kill the process for crossing the container's limit.
const containerLimitShare = 90

// tuneGC sets the daemon's garbage collector for the memory a user
// expects a daemon to take: the runtime's GOGC=100 (the heap grows to at
// most about twice the live data, so memory follows the data, not the
// history of requests), and in a container with a memory limit a soft
// limit of containerLimitShare percent of it. Each setting applies
// unless the environment chose otherwise (GOGC, GOMEMLIMIT). The
// earlier default, GOGC=400 with a quarter of the machine's memory as
// the limit, saved CPU per request but let the resident set reach
// ten times the live heap under appends.
func tuneGC(getenv func(string) string, log *slog.Logger) {
	if getenv("GOMEMLIMIT") == "" {
		if limit := containerMemoryLimit(); limit > 0 {
			debug.SetMemoryLimit(int64(limit / 100 * containerLimitShare))
		}
	}
	pct := debug.SetGCPercent(-1)
	debug.SetGCPercent(pct) // reading the percent sets it: put it back
	log.Debug("garbage collector", "gogc", pct, "memory_limit", debug.SetMemoryLimit(-1))
}

// startupIndexer is what returnStartupMemory waits on: a daemon.
type startupIndexer interface {
	Ready() <-chan struct{}
	WaitIndexed(ctx context.Context) error
}

// returnStartupMemory returns the start-up's garbage to the system once
// the daemon has indexed what it serves. A cold start reads every
// agent's memory and builds its index at once; the collector's goal
// then stays at twice that peak, and the runtime hands the pages back
// only slowly, so a restarted daemon showed twice what it holds for
// minutes. One forced collection afterwards costs a few milliseconds.
func returnStartupMemory(ctx context.Context, d startupIndexer, started time.Time, log *slog.Logger) {
	select {
	case <-d.Ready():
	case <-ctx.Done():
		return
	}
	if err := d.WaitIndexed(ctx); err != nil {
		return // not indexed (the store is away): the indexer retries
	}
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	log.Info("start-up indexed; its memory returned to the system", "took", time.Since(started).Round(time.Millisecond),
		"heap_mb", m.HeapAlloc>>20, "from_system_mb", (m.HeapSys-m.HeapReleased)>>20)
}
