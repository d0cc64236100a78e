package lsp

import (
	"bufio"
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/quirehq/quire/internal/fswatch"
)

// watchDelay is how long the workspace must stay quiet after a change on
// disk before the watcher reports it; the diagnostics debounce follows.
const watchDelay = 50 * time.Millisecond

// watcher reports changes made to the workspace on disk outside the editor
// (git checkout, another tool, Neovim, which offers no file watching on
// Linux). Its policy over the shared watcher (internal/fswatch): it
// watches only the directories a workspace can hold, those the workspace
// loader walks for agent.yaml and the agents' files, which means no
// hidden directory but .agents, no node_modules, and nothing git ignores;
// it ignores editor scratch files, and looks at every directory again
// when a .gitignore changes. A code repository opened in the editor costs
// a watch per directory of its sources, not one per directory of its
// dependencies.
type watcher struct {
	root    string
	log     *slog.Logger
	changed func()
	core    *fswatch.Watcher
	stop    context.CancelFunc
	done    chan struct{}
	ready   chan struct{} // closed once the first watches are in place
	first   bool          // no event has come yet (the core's goroutine only)
}

// startWatcher watches root and calls changed after every burst of changes.
// The watches are put in place in the background; changed is called once
// they are, since whatever changed before had no watch to see it.
func startWatcher(root string, log *slog.Logger, changed func()) *watcher {
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{root: root, log: log, changed: changed, stop: cancel, done: make(chan struct{}), ready: make(chan struct{}), first: true}
	w.core = fswatch.New(fswatch.Options{
		Roots:   []string{root},
		Skip:    w.skip,
		Ignore:  func(p string) bool { return fswatch.ScratchFile(filepath.Base(p)) },
		Delay:   fswatch.Constant(watchDelay),
		Logger:  log,
		OnEvent: w.event,
	})
	go func() {
		defer close(w.done)
		err := w.core.Run(ctx)
		if w.first {
			close(w.ready)
		}
		if ctx.Err() == nil {
			w.log.Warn("not watching the workspace", "root", w.root, "err", err)
		}
	}()
	return w
}

// event takes in a burst of changes (on the core's goroutine).
func (w *watcher) event(e fswatch.Event) {
	if w.first {
		w.first = false
		close(w.ready)
		w.log.Info("watching the workspace", "root", w.root, "directories", w.count())
	}
	if !e.Rescan {
		for _, p := range e.Paths {
			if filepath.Base(p) == ".gitignore" {
				// What is ignored changed: the rescan's event reports
				// this burst too.
				w.core.Rescan()
				return
			}
		}
	}
	w.changed()
}

// close stops watching and waits for the watcher to end.
func (w *watcher) close() {
	w.stop()
	<-w.done
}

// count is the number of directories watched.
func (w *watcher) count() int { return len(w.core.Dirs()) }

// dirs lists the watched directories (slash paths relative to the root,
// "." for the root).
func (w *watcher) dirs() []string {
	var out []string
	for _, d := range w.core.Dirs() {
		if rel, err := filepath.Rel(w.root, d); err == nil {
			out = append(out, filepath.ToSlash(rel))
		}
	}
	sort.Strings(out)
	return out
}

// skip reports a directory (absolute) that cannot hold workspace files.
func (w *watcher) skip(dir string) bool {
	if skippedDir(filepath.Base(dir)) {
		return true
	}
	rel, err := filepath.Rel(w.root, dir)
	if err != nil || rel == "." {
		return false
	}
	return gitIgnored(w.root, filepath.ToSlash(rel))
}

// gitIgnored reports whether git ignores the directory rel (a slash path
// below root): .git/info/exclude and the .gitignore files of root and the
// directories above rel say so.
func gitIgnored(root, rel string) bool {
	patterns := readIgnore(filepath.Join(root, ".git", "info", "exclude"), nil)
	parts := strings.Split(rel, "/")
	for i := range parts {
		domain := parts[:i]
		patterns = append(patterns, readIgnore(filepath.Join(root, filepath.FromSlash(strings.Join(domain, "/")), ".gitignore"), domain)...)
	}
	return gitignore.NewMatcher(patterns).Match(parts, true)
}

// skippedDir reports directory names that never hold workspace files, as
// the workspace loader sees it: hidden ones (.git among them) except
// .agents, and node_modules.
func skippedDir(name string) bool {
	return name == "node_modules" || (strings.HasPrefix(name, ".") && name != ".agents")
}

// readIgnore reads the patterns of a .gitignore file in the directory
// domain; a missing file has none.
func readIgnore(name string, domain []string) []gitignore.Pattern {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil
	}
	var out []gitignore.Pattern
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, gitignore.ParsePattern(line, domain))
	}
	return out
}
