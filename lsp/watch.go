package lsp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// watchDelay is how long the workspace must stay quiet after a change on
// disk before the watcher reports it; the diagnostics debounce follows.
const watchDelay = 50 * time.Millisecond

// watcher reports changes made to the workspace on disk outside the editor
// (git checkout, another tool, Neovim, which offers no file watching on
// Linux). It watches only the directories a workspace can hold: those the
// workspace loader walks for agent.yaml and the agents' files, which means
// no hidden directory but .agents, no node_modules, and nothing git
// ignores. A code repository opened in the editor costs a watch per
// directory of its sources, not one per directory of its dependencies.
type watcher struct {
	root    string
	log     *slog.Logger
	changed func()
	fw      *fsnotify.Watcher
	stop    context.CancelFunc
	done    chan struct{}
	ready   chan struct{} // closed once the first watches are in place

	mu      sync.Mutex
	watched map[string]bool // slash paths relative to root ("." is the root)
}

// startWatcher watches root and calls changed after every burst of changes.
// The watches are put in place in the background; changed is called once
// they are, since whatever changed before had no watch to see it.
func startWatcher(root string, log *slog.Logger, changed func()) (*watcher, error) {
	fw, err := fsnotify.NewBufferedWatcher(1024)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{root: root, log: log, changed: changed, fw: fw, stop: cancel, done: make(chan struct{}), ready: make(chan struct{}), watched: map[string]bool{}}
	go w.run(ctx)
	return w, nil
}

// close stops watching and waits for the watcher to end.
func (w *watcher) close() {
	w.stop()
	<-w.done
}

// count is the number of directories watched.
func (w *watcher) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.watched)
}

// dirs lists the watched directories (slash paths relative to the root).
func (w *watcher) dirs() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.watched))
	for d := range w.watched {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// run reports changes until ctx is done: once the workspace has been
// quiet for watchDelay after a change, or ten delays after the first
// change of a burst that does not stop.
func (w *watcher) run(ctx context.Context) {
	defer close(w.done)
	defer w.fw.Close()
	err := w.sync()
	close(w.ready)
	if err != nil {
		w.log.Warn("not watching the workspace", "root", w.root, "err", err)
		return
	}
	w.log.Info("watching the workspace", "root", w.root, "directories", w.count())
	w.changed()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var first time.Time // the first change not yet reported
	resync := false
	note := func() {
		now := time.Now()
		if first.IsZero() {
			first = now
		}
		timer.Reset(min(watchDelay, max(0, first.Add(10*watchDelay).Sub(now))))
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			rel, err := filepath.Rel(w.root, ev.Name)
			if err != nil || strings.HasPrefix(rel, "..") {
				continue
			}
			rel = filepath.ToSlash(rel)
			base := path.Base(rel)
			if scratchFile(base) {
				continue
			}
			switch {
			case base == ".gitignore":
				resync = true // what is ignored changed
			case ev.Has(fsnotify.Create):
				if info, err := os.Lstat(ev.Name); err == nil && info.IsDir() {
					if skippedDir(base) {
						continue // node_modules appearing says nothing about the workspace
					}
					resync = true // a new directory: watch it if it can hold workspace files
				}
			case ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename):
				w.mu.Lock()
				if w.watched[rel] {
					resync = true
				}
				w.mu.Unlock()
			}
			note()
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				resync = true // events were lost: look at everything again
				note()
				continue
			}
			w.log.Warn("watch", "root", w.root, "err", err)
		case <-timer.C:
			first = time.Time{}
			if resync {
				resync = false
				if err := w.sync(); err != nil {
					w.log.Warn("watch", "root", w.root, "err", err)
				}
			}
			w.changed()
		}
	}
}

// scratchFile reports the names of editor scratch files, whose changes say
// nothing about the workspace.
func scratchFile(base string) bool {
	return strings.HasSuffix(base, "~") || strings.HasSuffix(base, ".swp") || strings.HasSuffix(base, ".swx") ||
		strings.HasPrefix(base, ".#") || base == "4913" || strings.HasSuffix(base, ".tmp")
}

// sync walks the workspace and makes the watched directories those that
// can hold workspace files: watches are added for new ones and removed
// for those that are gone or now ignored.
func (w *watcher) sync() error {
	want, err := workspaceDirs(w.root)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for d := range w.watched {
		if !want[d] {
			_ = w.fw.Remove(filepath.Join(w.root, filepath.FromSlash(d))) // gone already, or now ignored
			delete(w.watched, d)
		}
	}
	var addErr error
	for d := range want {
		if w.watched[d] {
			continue
		}
		if err := w.fw.Add(filepath.Join(w.root, filepath.FromSlash(d))); err != nil {
			if d == "." {
				addErr = err
			}
			continue // vanished meanwhile
		}
		w.watched[d] = true
	}
	return addErr
}

// workspaceDirs lists the directories under root (slash paths, "." for
// root) that can hold workspace files: every directory but hidden ones
// (.agents excepted), node_modules and those git ignores (.gitignore files
// and .git/info/exclude).
func workspaceDirs(root string) (map[string]bool, error) {
	dirs := map[string]bool{}
	var patterns []gitignore.Pattern
	patterns = append(patterns, readIgnore(filepath.Join(root, ".git", "info", "exclude"), nil)...)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil // unreadable or vanished: nothing to watch
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel != "." {
			if skippedDir(d.Name()) {
				return filepath.SkipDir
			}
			if gitignore.NewMatcher(patterns).Match(strings.Split(rel, "/"), true) {
				return filepath.SkipDir
			}
		}
		var domain []string
		if rel != "." {
			domain = strings.Split(rel, "/")
		}
		patterns = append(patterns, readIgnore(filepath.Join(p, ".gitignore"), domain)...)
		dirs[rel] = true
		return nil
	})
	return dirs, err
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
