package agent

import (
	"strings"
	"time"

	"github.com/quirehq/quire/workspace"
)

// The debounce delays of a watched workspace (Delay).
const (
	// FileDelay is how long a file must stay unchanged before its change
	// is reported.
	FileDelay = 500 * time.Millisecond
	// MemoryDelay is the same for memory documents, which agents and
	// editors write in bursts.
	MemoryDelay = 1500 * time.Millisecond
)

// Delay is how long a watcher of a working tree (gitsync.Watcher.Delay)
// waits for the file at slash path p, relative to the tree's root, to
// stay unchanged: MemoryDelay for a memory document of some agent (some
// tail of p is one: workspace.KindOf, whichever directory holds the
// agent), FileDelay for any other file and for a rescan ("").
func Delay(p string) time.Duration {
	if isMemoryPath(p) {
		return MemoryDelay
	}
	return FileDelay
}

// isMemoryPath reports whether some tail of p is a memory document.
func isMemoryPath(p string) bool {
	for rest := p; rest != ""; {
		if workspace.KindOf(rest).IsMemory() {
			return true
		}
		_, after, ok := strings.Cut(rest, "/")
		if !ok {
			break
		}
		rest = after
	}
	return false
}
