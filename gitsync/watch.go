package gitsync

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/quirehq/quire/internal/fswatch"
)

// DefaultDelay is how long a file must stay unchanged before a Watcher
// without a Delay reports it.
const DefaultDelay = 500 * time.Millisecond

// Watcher reports changes to the files of a working tree as
// SourceWorkTree events. Its policy over the shared watcher
// (internal/fswatch, which watches every directory, walking new ones
// as they appear, and rescans after the kernel queue overflows): it
// watches everything but .git, ignores editor scratch files (so an atomic
// save, written to a temporary name and renamed over the file, is a change
// of the file), reports files only (not the directories that hold them)
// and debounces: changes are batched by their delay (Delay, which the
// caller's policy gives: the daemon waits longer for memory files, which
// agents and editors write in bursts) and a batch is reported once it has
// been quiet for that delay.
type Watcher struct {
	// Root is the directory watched.
	Root string
	// OnEvent receives the batched changes.
	OnEvent func(Event)
	// Logger receives watch errors; nil discards.
	Logger *slog.Logger
	// Delay gives the delay of a slash path relative to Root ("" for a
	// rescan); nil waits DefaultDelay for every path.
	Delay func(path string) time.Duration

	// core is the shared watcher, set by Run before its first event.
	core *fswatch.Watcher
}

// ignored reports paths the watcher never reports: the root itself,
// anything under .git and editor scratch files.
func ignored(rel string) bool {
	if rel == "." {
		return true
	}
	for _, part := range strings.Split(rel, "/") {
		if part == ".git" {
			return true
		}
	}
	return fswatch.ScratchFile(path.Base(rel))
}

// Run watches until ctx is done and returns ctx's error. Once its watches
// are in place it reports a Rescan: whatever changed before then had no
// watch to see it (a file saved while the daemon was deploying the tree,
// say).
func (w *Watcher) Run(ctx context.Context) error {
	root, err := filepath.Abs(w.Root)
	if err != nil {
		return fmt.Errorf("watch %s: %w", w.Root, err)
	}
	if info, err := os.Stat(root); err != nil {
		return fmt.Errorf("watch %s: %w", root, err)
	} else if !info.IsDir() {
		return fmt.Errorf("watch %s: not a directory", root)
	}
	delay := w.Delay
	if delay == nil {
		delay = func(string) time.Duration { return DefaultDelay }
	}
	rel := func(p string) string {
		r, err := filepath.Rel(root, p)
		if err != nil {
			return p
		}
		return filepath.ToSlash(r)
	}
	w.core = fswatch.New(fswatch.Options{
		Roots:  []string{root},
		Skip:   func(dir string) bool { return filepath.Base(dir) == ".git" },
		Ignore: func(p string) bool { return ignored(rel(p)) },
		Delay: func(p string) time.Duration {
			if p == root {
				return delay("") // a rescan
			}
			return delay(rel(p))
		},
		Logger: w.Logger,
		OnEvent: func(e fswatch.Event) {
			if e.Rescan {
				w.emit(Event{Source: SourceWorkTree, Name: root, Rescan: true})
				return
			}
			var paths []string
			for _, p := range e.Paths {
				if r := rel(p); !strings.HasPrefix(r, "../") {
					paths = append(paths, r)
				}
			}
			if len(paths) > 0 {
				w.emit(Event{Source: SourceWorkTree, Name: root, Paths: paths})
			}
		},
	})
	return w.core.Run(ctx)
}

func (w *Watcher) emit(e Event) {
	if w.OnEvent != nil {
		w.OnEvent(e)
	}
}
