package skills

import (
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quirehq/quire/internal/fswatch"
	"github.com/quirehq/quire/workspace"
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
	started chan struct{}    // closed once Run's watches are in place (tests)
	core    *fswatch.Watcher // set by Run before its first event
}

// NewWatcher loads the skills that opts names (version 1). Call Run to keep
// them current. log may be nil.
func NewWatcher(opts Options, log *slog.Logger) *Watcher {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &Watcher{opts: opts, log: log.With("component", "skills"), updates: make(chan struct{}, 1), started: make(chan struct{})}
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
	set := Load(w.version, w.opts.Sources())
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
		out = append(out, filepath.Join(w.opts.WorkspaceDir, workspace.SkillsDir), filepath.Join(w.opts.WorkspaceDir, filepath.FromSlash(workspace.AgentSkillsDir)))
	}
	if w.opts.HomeDir != "" {
		out = append(out, filepath.Join(w.opts.HomeDir, filepath.FromSlash(workspace.AgentSkillsDir)))
	}
	if w.opts.ManagedDir != "" {
		out = append(out, filepath.Clean(w.opts.ManagedDir))
	}
	return out
}

// Run watches the tier directories until ctx is done, reloading Debounce
// after the last change (or ten Debounce after the first of changes that
// do not stop). Its policy over the shared watcher
// (internal/fswatch, which watches every directory below each tier
// as directories come and go, waits for a tier directory that does not
// exist yet, and rescans when the kernel's event queue overflows): it
// ignores .git and attribute changes, and reloads on any other change.
// Run reloads once when its watches are in place, then after every burst
// of changes. Call Run once.
func (w *Watcher) Run(ctx context.Context) error {
	roots := w.roots()
	first := true
	w.core = fswatch.New(fswatch.Options{
		Roots:       roots,
		Skip:        func(dir string) bool { return filepath.Base(dir) == ".git" },
		Ignore:      func(p string) bool { return inGit(p, roots) },
		IgnoreChmod: true,
		Delay:       fswatch.Constant(Debounce),
		Logger:      w.log,
		OnEvent: func(e fswatch.Event) {
			set := w.Reload()
			if first {
				// Whatever changed between NewWatcher and now had no
				// watch to see it: the reload covers it.
				first = false
				close(w.started)
				return
			}
			w.log.Info("skills reloaded", "version", set.Version(), "skills", len(set.Skills()), "problems", len(set.Problems()))
		},
	})
	if err := w.core.Run(ctx); ctx.Err() == nil {
		// The Set loaded stays; it is no longer kept current.
		w.log.Warn("not watching the skills directories", "err", err)
	}
	return nil
}

// inGit reports whether p lies in a .git directory inside one of the
// roots.
func inGit(p string, roots []string) bool {
	for _, root := range roots {
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		return slices.Contains(strings.Split(rel, string(filepath.Separator)), ".git")
	}
	return false
}
