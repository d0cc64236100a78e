package skills

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Debounce is how long the Watcher waits after the last file event before
// it reloads: a burst of saves becomes one reload.
const Debounce = 500 * time.Millisecond

// Watcher keeps the current Set of an agent's skills and reloads it when a
// tier directory on disk changes. The current Set is an immutable value
// swapped atomically: readers call Set and never touch the disk.
type Watcher struct {
	opts    Options
	log     *slog.Logger
	current atomic.Pointer[Set]
	mu      sync.Mutex // serialises reloads; guards version
	version uint64
	updates chan struct{}
	started chan struct{} // closed once Run's watches are in place (tests)
}

// NewWatcher loads the skills that opts names (version 1). Call Run to keep
// them current. log may be nil.
func NewWatcher(opts Options, log *slog.Logger) *Watcher {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &Watcher{opts: opts, log: log, updates: make(chan struct{}, 1), started: make(chan struct{})}
	w.Reload()
	return w
}

// Set returns the current Set. It never blocks on a reload.
func (w *Watcher) Set() *Set { return w.current.Load() }

// Updates delivers a value after each reload. The channel holds at most
// one pending value, so a slow reader sees a burst of reloads as one.
func (w *Watcher) Updates() <-chan struct{} { return w.updates }

// Reload reads every tier now, publishes the result with the next version
// and returns it.
func (w *Watcher) Reload() *Set {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.version++
	set := Load(w.version, w.opts.Sources(), w.opts.Access)
	w.current.Store(set)
	select {
	case w.updates <- struct{}{}:
	default:
	}
	return set
}

// roots returns the tier directories that live on disk.
func (w *Watcher) roots() []string {
	var out []string
	if w.opts.WorkspaceDir != "" && w.opts.Workspace == nil {
		out = append(out, filepath.Join(w.opts.WorkspaceDir, "skills"), filepath.Join(w.opts.WorkspaceDir, ".agents", "skills"))
	}
	if w.opts.HomeDir != "" {
		out = append(out, filepath.Join(w.opts.HomeDir, ".agents", "skills"))
	}
	if w.opts.ManagedDir != "" {
		out = append(out, filepath.Clean(w.opts.ManagedDir))
	}
	return out
}

// Run watches the tier directories until ctx is done, reloading Debounce
// after the last change. fsnotify is not recursive, so Run watches every
// directory below each tier, adds new directories (and what is already in
// them) as they appear, watches the nearest existing parent of a tier
// directory that does not exist yet, ignores .git, and rescans everything
// when the kernel's event queue overflows. Run reloads once when its
// watches are in place, then after every change. Call Run once.
func (w *Watcher) Run(ctx context.Context) error {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch skills: %w", err)
	}
	defer fw.Close()
	return w.loop(ctx, fw)
}

// loop is Run's event loop over an fsnotify watcher.
func (w *Watcher) loop(ctx context.Context, fw *fsnotify.Watcher) error {
	roots := w.roots()
	w.sync(fw, roots)
	// Whatever changed between NewWatcher and now had no watch to see it.
	w.Reload()
	close(w.started)

	timer := time.NewTimer(Debounce)
	timer.Stop()
	armed := false
	arm := func() {
		timer.Reset(Debounce)
		armed = true
	}
	for {
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case ev, ok := <-fw.Events:
			if !ok {
				return nil
			}
			if !relevant(ev, roots) {
				continue
			}
			if ev.Has(fsnotify.Create) {
				if info, err := os.Stat(ev.Name); err == nil && info.IsDir() {
					w.addTree(fw, ev.Name) // catch files written before the watch existed
					if isAncestorOfRoot(ev.Name, roots) {
						w.sync(fw, roots)
					}
				}
			}
			arm()
		case err, ok := <-fw.Errors:
			if !ok {
				return nil
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.log.Warn("skills watcher queue overflowed; rescanning every tier")
				w.sync(fw, roots)
				arm()
				continue
			}
			w.log.Warn("skills watcher", "err", err)
		case <-timer.C:
			if !armed {
				continue
			}
			armed = false
			set := w.Reload()
			w.sync(fw, roots)
			w.log.Info("skills reloaded", "version", set.Version(), "skills", len(set.Skills()), "problems", len(set.Problems()))
		}
	}
}

// sync adds a watch on every directory below each existing root, and on the
// nearest existing ancestor of each missing one. Adding a watch twice is
// harmless.
func (w *Watcher) sync(fw *fsnotify.Watcher, roots []string) {
	for _, root := range roots {
		if info, err := os.Stat(root); err == nil && info.IsDir() {
			w.addTree(fw, root)
			continue
		}
		for dir := filepath.Dir(root); ; dir = filepath.Dir(dir) {
			if info, err := os.Stat(dir); err == nil && info.IsDir() {
				if err := fw.Add(dir); err != nil {
					w.log.Warn("watch skills parent directory", "dir", dir, "err", err)
				}
				break
			}
			if dir == filepath.Dir(dir) {
				break
			}
		}
	}
}

// addTree watches dir and every directory below it except .git.
func (w *Watcher) addTree(fw *fsnotify.Watcher, dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // vanished meanwhile: the next event covers it
		}
		if !d.IsDir() {
			return nil
		}
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		if err := fw.Add(p); err != nil {
			w.log.Warn("watch skills directory", "dir", p, "err", err)
		}
		return nil
	})
}

// relevant reports whether ev may change a skill: it lies inside a root
// (outside .git) or creates, removes or renames a root or one of its
// ancestors. A bare chmod is never relevant.
func relevant(ev fsnotify.Event, roots []string) bool {
	if ev.Op == fsnotify.Chmod {
		return false
	}
	for _, root := range roots {
		if within(ev.Name, root) {
			rel, _ := filepath.Rel(root, ev.Name)
			for _, part := range strings.Split(rel, string(filepath.Separator)) {
				if part == ".git" {
					return false
				}
			}
			return true
		}
	}
	return isAncestorOfRoot(ev.Name, roots)
}

func isAncestorOfRoot(p string, roots []string) bool {
	for _, root := range roots {
		if p != root && within(root, p) {
			return true
		}
	}
	return false
}

// within reports whether p is dir or lies below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}
