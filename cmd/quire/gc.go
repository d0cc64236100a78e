package main

import (
	"log/slog"
	"runtime/debug"
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
