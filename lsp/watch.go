package lsp

import (
	"context"
	"log/slog"
	"time"

	"github.com/quirehq/quire/gitsync"
)

// watchDelay is how long a changed file must stay quiet before the watcher
// reports it; the diagnostics debounce follows.
const watchDelay = 50 * time.Millisecond

// watcher reports changes made to the workspace on disk outside the editor
// (git checkout, another tool, Neovim, which offers no file watching on
// Linux), with the daemon's work-tree watcher: every directory, atomic
// saves, editor scratch files ignored, a rescan after an overflow.
type watcher struct {
	stop func()
	done chan struct{}
}

// startWatcher watches root and calls changed after every batch of changes.
func startWatcher(root string, log *slog.Logger, changed func()) (*watcher, error) {
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{stop: cancel, done: make(chan struct{})}
	gw := &gitsync.Watcher{
		Root:    root,
		OnEvent: func(gitsync.Event) { changed() },
		Logger:  log,
		Delay:   func(string) time.Duration { return watchDelay },
	}
	go func() {
		defer close(w.done)
		if err := gw.Run(ctx); err != nil && ctx.Err() == nil {
			log.Warn("not watching the workspace", "root", root, "err", err)
		}
	}()
	return w, nil
}

// close stops watching and waits for the watcher to end.
func (w *watcher) close() {
	w.stop()
	<-w.done
}
