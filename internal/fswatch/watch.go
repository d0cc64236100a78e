// Package fswatch is the one file-system watcher of Quire: the daemon's
// --dir working trees (gitsync), the shared skills directories (skills)
// and the language server's workspace (lsp) all watch through it, and
// keep only their policy: what to watch, what to report, how long to wait.
//
// A Watcher watches directory trees with fsnotify, which is not recursive:
// it walks each root, watches every directory its Skip rule admits, and
// watches new directories (reporting what is already in them) as they
// appear and forgets those removed or renamed away. A root that does not
// exist yet is waited for: its nearest existing ancestor is watched until
// it appears. Changes are debounced: a burst of changes becomes one Event,
// reported once it has been quiet for its delay, or ten delays after its
// first change if it never stops. Once the watches are in place, and after
// events were lost (the kernel queue overflowed), every root is walked
// again and a Rescan event says that anything may have changed.
package fswatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Options says what a Watcher watches and whom it tells.
type Options struct {
	// Roots are the directories watched, each with every directory below
	// it that Skip admits.
	Roots []string
	// Skip, when set, reports a directory below a root (an absolute path)
	// that is not watched, nor anything below it; its own appearance is not
	// reported either. It is called on Run's goroutine.
	Skip func(dir string) bool
	// Ignore, when set, reports a path (absolute, inside a root) whose
	// changes are not reported.
	Ignore func(path string) bool
	// IgnoreChmod drops changes of a file's attributes alone (chmod,
	// touch).
	IgnoreChmod bool
	// Delay is how long the changes of a path (absolute) must be quiet
	// before they are reported; nil reports each change at once. Changes
	// with the same delay are reported together; a rescan waits for the
	// shortest delay of the roots.
	Delay func(path string) time.Duration
	// OnEvent receives the events, one at a time, on Run's goroutine.
	OnEvent func(Event)
	// Logger receives watch errors; nil discards.
	Logger *slog.Logger
}

// Event is a batch of changes.
type Event struct {
	// Paths are the changed files (and other entries that are not
	// watched directories), absolute and sorted: written, created,
	// removed, renamed, or found in a directory that appeared.
	Paths []string
	// Dirs are the directories that appeared and are now watched,
	// absolute and sorted.
	Dirs []string
	// Rescan says that every root was walked again because changes could
	// not be seen (when the watches were being put in place) or were lost
	// (a queue overflow): consider everything changed. Paths and Dirs are
	// then empty.
	Rescan bool
}

// Constant is a Delay of d for every path.
func Constant(d time.Duration) func(string) time.Duration {
	return func(string) time.Duration { return d }
}

// ScratchFile reports whether the base name of a file is one editors and
// tools write on their way to saving another (backups, swap files, lock
// files, vim's write test, temporary files), whose changes say nothing.
func ScratchFile(base string) bool {
	return strings.HasSuffix(base, "~") || strings.HasSuffix(base, ".swp") || strings.HasSuffix(base, ".swx") ||
		strings.HasPrefix(base, ".#") || base == "4913" || strings.HasSuffix(base, ".tmp")
}

// Watcher watches the roots of its Options. Call Run once.
type Watcher struct {
	opts   Options
	log    *slog.Logger
	roots  []string      // absolute, clean
	rescan chan struct{} // a requested rescan (size one)

	mu       sync.Mutex
	dirs     map[string]bool // watched directories inside the roots
	lookouts map[string]bool // watched ancestors of roots that do not exist

	fw *fsnotify.Watcher // set by Run
}

// New returns a Watcher for opts. It watches nothing until Run.
func New(opts Options) *Watcher {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var roots []string
	for _, r := range opts.Roots {
		if abs, err := filepath.Abs(r); err == nil {
			r = abs
		}
		if r = filepath.Clean(r); !slices.Contains(roots, r) {
			roots = append(roots, r)
		}
	}
	return &Watcher{opts: opts, log: log, roots: roots, rescan: make(chan struct{}, 1), dirs: map[string]bool{}, lookouts: map[string]bool{}}
}

// Dirs lists the directories watched inside the roots, sorted.
func (w *Watcher) Dirs() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.dirs))
	for d := range w.dirs {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// Rescan asks for every root to be walked again, as after lost events:
// directories now admitted are watched, those gone or now skipped are
// not, and a Rescan event follows once things are quiet. It never blocks
// and may be called from OnEvent.
func (w *Watcher) Rescan() {
	select {
	case w.rescan <- struct{}{}:
	default:
	}
}

// Run watches until ctx is done, then releases every watch and returns
// ctx's error. Once its watches are in place it reports a Rescan event:
// whatever changed before then had no watch to see it. It returns early
// only when it cannot watch at all (no inotify instance, or a root that
// exists but cannot be watched).
func (w *Watcher) Run(ctx context.Context) error {
	fw, err := fsnotify.NewBufferedWatcher(1024)
	if err != nil {
		return fmt.Errorf("watch %s: %w", strings.Join(w.roots, ", "), err)
	}
	defer fw.Close()
	w.fw = fw
	if err := w.sync(nil); err != nil {
		return err
	}
	w.emit(Event{Rescan: true})
	return w.loop(ctx, fw.Events, fw.Errors)
}

// change is a path waiting to be reported.
type change struct {
	first, last time.Time
	dir         bool
}

// rescanKey is the pending entry of a rescan ("" is never a path).
const rescanKey = ""

// loop is Run's event loop.
func (w *Watcher) loop(ctx context.Context, events <-chan fsnotify.Event, errs <-chan error) error {
	pending := map[string]*change{}
	note := func(p string, dir bool) {
		now := time.Now()
		if c, ok := pending[p]; ok {
			c.last = now
			c.dir = c.dir || dir
			return
		}
		pending[p] = &change{first: now, last: now, dir: dir}
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	arm := func() {
		if next, ok := w.nextDue(pending); ok {
			timer.Reset(max(time.Until(next), 0))
		}
	}
	for {
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case ev, ok := <-events:
			if !ok {
				return ctx.Err()
			}
			w.handle(ev, note)
			arm()
		case err, ok := <-errs:
			if !ok {
				return ctx.Err()
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.log.Warn("watch: events were lost; rescanning", "roots", w.roots)
				note(rescanKey, false)
				arm()
				continue
			}
			w.log.Warn("watch", "roots", w.roots, "err", err)
		case <-w.rescan:
			note(rescanKey, false)
			arm()
		case <-timer.C:
			w.report(pending)
			arm()
		}
	}
}

// handle takes in one fsnotify event, noting what it changed.
func (w *Watcher) handle(ev fsnotify.Event, note func(string, bool)) {
	name := filepath.Clean(ev.Name)
	if w.opts.IgnoreChmod && ev.Op == fsnotify.Chmod {
		return
	}
	root, inside := w.rootOf(name)
	if !inside {
		// From a lookout: only an ancestor of a root matters, and only
		// for what it brings (a root that appeared).
		if w.leadsToRoot(name) {
			w.noteAll(w.syncChanges(), note)
		}
		return
	}
	if name == root {
		// The root appeared, or was removed or moved away: watch it, or
		// look out for it again.
		if ev.Has(fsnotify.Create) || ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			w.noteAll(w.syncChanges(), note)
		}
		if !ev.Has(fsnotify.Create) && !w.ignored(name) {
			note(name, false)
		}
		return
	}
	if w.ignored(name) {
		return
	}
	if ev.Has(fsnotify.Create) {
		if info, err := os.Lstat(name); err == nil && info.IsDir() {
			if w.skipped(name) {
				return
			}
			// A new directory: watch it, and report what is already in it.
			w.mu.Lock()
			found := w.addTree(name)
			w.mu.Unlock()
			w.noteAll(found, note)
			return
		}
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		w.mu.Lock()
		w.forget(name) // when it was a watched directory
		w.mu.Unlock()
	}
	note(name, false)
}

// noteAll notes the entries a walk found.
func (w *Watcher) noteAll(found []found, note func(string, bool)) {
	for _, f := range found {
		note(f.path, f.dir)
	}
}

// report reports the batches that are due, and the rescan if it is.
func (w *Watcher) report(pending map[string]*change) {
	now := time.Now()
	due := map[time.Duration]bool{}
	for d, b := range w.batches(pending) {
		if !b.due(d).After(now) {
			due[d] = true
		}
	}
	if _, ok := pending[rescanKey]; ok && due[w.delayOf(rescanKey)] {
		clear(pending)
		if err := w.sync(nil); err != nil {
			w.log.Warn("watch: rescan", "roots", w.roots, "err", err)
		}
		w.emit(Event{Rescan: true})
		return
	}
	var ev Event
	for p, c := range pending {
		if p == rescanKey || !due[w.delayOf(p)] {
			continue
		}
		delete(pending, p)
		if c.dir {
			ev.Dirs = append(ev.Dirs, p)
		} else {
			ev.Paths = append(ev.Paths, p)
		}
	}
	if len(ev.Paths) > 0 || len(ev.Dirs) > 0 {
		slices.Sort(ev.Paths)
		slices.Sort(ev.Dirs)
		w.emit(ev)
	}
}

// batch is the pending changes that share a delay.
type batch struct{ first, last time.Time }

// due is when a batch is reported: once its newest change is d old, or
// its oldest ten d old (so a file rewritten without pause is reported).
func (b batch) due(d time.Duration) time.Time {
	at := b.last.Add(d)
	if limit := b.first.Add(10 * d); limit.Before(at) {
		return limit
	}
	return at
}

func (w *Watcher) batches(pending map[string]*change) map[time.Duration]*batch {
	out := map[time.Duration]*batch{}
	for p, c := range pending {
		d := w.delayOf(p)
		b, ok := out[d]
		if !ok {
			out[d] = &batch{first: c.first, last: c.last}
			continue
		}
		if c.first.Before(b.first) {
			b.first = c.first
		}
		if c.last.After(b.last) {
			b.last = c.last
		}
	}
	return out
}

// nextDue is when the next batch is due; false when nothing is pending.
func (w *Watcher) nextDue(pending map[string]*change) (time.Time, bool) {
	var next time.Time
	for d, b := range w.batches(pending) {
		if at := b.due(d); next.IsZero() || at.Before(next) {
			next = at
		}
	}
	return next, !next.IsZero()
}

// delayOf is the delay of a pending path; a rescan waits for the shortest
// delay of the roots.
func (w *Watcher) delayOf(p string) time.Duration {
	if w.opts.Delay == nil {
		return 0
	}
	if p != rescanKey {
		return w.opts.Delay(p)
	}
	d := time.Duration(-1)
	for _, r := range w.roots {
		if rd := w.opts.Delay(r); d < 0 || rd < d {
			d = rd
		}
	}
	return max(d, 0)
}

func (w *Watcher) emit(e Event) {
	if w.opts.OnEvent != nil {
		w.opts.OnEvent(e)
	}
}

func (w *Watcher) ignored(p string) bool { return w.opts.Ignore != nil && w.opts.Ignore(p) }

func (w *Watcher) skipped(dir string) bool { return w.opts.Skip != nil && w.opts.Skip(dir) }

// rootOf returns the root p lies in (p itself or below it).
func (w *Watcher) rootOf(p string) (string, bool) {
	for _, r := range w.roots {
		if within(p, r) {
			return r, true
		}
	}
	return "", false
}

// leadsToRoot reports whether p is a strict ancestor of a root.
func (w *Watcher) leadsToRoot(p string) bool {
	for _, r := range w.roots {
		if p != r && within(r, p) {
			return true
		}
	}
	return false
}

// within reports whether p is dir or lies below it.
func within(p, dir string) bool {
	if dir == string(filepath.Separator) {
		return strings.HasPrefix(p, dir)
	}
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// found is an entry a walk found.
type found struct {
	path string
	dir  bool
}

// syncChanges syncs the watches with the roots and returns what is in the
// roots that were not watched before (they appeared).
func (w *Watcher) syncChanges() []found {
	var out []found
	if err := w.sync(&out); err != nil {
		w.log.Warn("watch", "roots", w.roots, "err", err)
	}
	return out
}

// sync walks every root again: it watches the directories that are
// admitted and not yet watched, stops watching those gone or skipped,
// and watches the nearest existing ancestor of each root that does not
// exist. When appeared is not nil, the contents of roots that were not
// watched before are added to it. It fails when a root that exists cannot
// be watched.
func (w *Watcher) sync(appeared *[]found) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	want := map[string]bool{}
	lookouts := map[string]bool{}
	var errs []error
	tried := map[string]bool{} // lookouts watched on the way
	for _, root := range w.roots {
		// A root appearing, or vanishing, while it is looked at makes
		// another round; a few are plenty.
		for range 10 {
			info, err := os.Stat(root)
			if err == nil && info.IsDir() {
				err := w.fw.Add(root)
				if errors.Is(err, os.ErrNotExist) {
					continue // removed meanwhile
				}
				if err != nil {
					errs = append(errs, fmt.Errorf("watch %s: %w", root, err))
					break
				}
				var out *[]found
				if !w.dirs[root] && appeared != nil {
					*appeared = append(*appeared, found{root, true})
					out = appeared
				}
				w.dirs[root] = true
				want[root] = true
				w.walk(root, want, out)
				break
			}
			dir, ok := w.lookOut(root)
			if !ok {
				break
			}
			tried[dir] = true
			// The next directory on the way to the root, created between
			// the look and the watch, went unseen: look again.
			if _, err := os.Lstat(towards(dir, root)); err != nil {
				lookouts[dir] = true
				break
			}
		}
	}
	for d := range w.dirs {
		if !want[d] {
			delete(w.dirs, d)
			if !lookouts[d] {
				_ = w.fw.Remove(d) // gone already, or now skipped
			}
		}
	}
	for d := range w.lookouts {
		tried[d] = true
	}
	for d := range tried {
		if !lookouts[d] && !w.dirs[d] {
			_ = w.fw.Remove(d)
		}
	}
	w.lookouts = lookouts
	return errors.Join(errs...)
}

// addTree watches dir and every admitted directory below it, and returns
// what it holds (dir itself first) unless it was watched already. The
// caller holds mu.
func (w *Watcher) addTree(dir string) []found {
	if w.dirs[dir] {
		return nil
	}
	if err := w.fw.Add(dir); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			w.log.Warn("watch", "dir", dir, "err", err)
		}
		return nil
	}
	w.dirs[dir] = true
	out := []found{{dir, true}}
	w.walk(dir, nil, &out)
	return out
}

// walk watches the admitted directories below dir (already watched),
// marking them in want (when not nil), and appends what it finds to out when out is not
// nil. Directories that vanish meanwhile are passed over: their events
// tell. The caller holds mu.
func (w *Watcher) walk(dir string, want map[string]bool, out *[]found) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if !e.IsDir() {
			if out != nil && !w.ignored(p) {
				*out = append(*out, found{p, false})
			}
			continue
		}
		if w.skipped(p) {
			continue
		}
		// Adding a watch again is harmless, and mends one lost.
		if err := w.fw.Add(p); err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				w.log.Warn("watch", "dir", p, "err", err)
			}
			continue
		}
		w.dirs[p] = true
		if want != nil {
			want[p] = true
		}
		if out != nil {
			*out = append(*out, found{p, true})
		}
		w.walk(p, want, out)
	}
}

// forget stops watching dir and every directory below it, if it was
// watched. The caller holds mu.
func (w *Watcher) forget(dir string) {
	if !w.dirs[dir] {
		return
	}
	for d := range w.dirs {
		if within(d, dir) {
			delete(w.dirs, d)
			if !w.lookouts[d] {
				_ = w.fw.Remove(d) // gone already
			}
		}
	}
}

// towards is the directory below dir on the way to p, a path below it.
func towards(dir, p string) string {
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return p
	}
	first, _, _ := strings.Cut(rel, string(filepath.Separator))
	return filepath.Join(dir, first)
}

// lookOut watches the nearest existing directory above the missing root
// and returns it. The caller holds mu.
func (w *Watcher) lookOut(root string) (string, bool) {
	for dir := filepath.Dir(root); ; {
		info, err := os.Stat(dir)
		if err == nil && info.IsDir() {
			err = w.fw.Add(dir) // again, if watched already: harmless
			if err == nil {
				return dir, true
			}
			if !errors.Is(err, os.ErrNotExist) {
				w.log.Warn("watch: cannot wait for a root", "root", root, "dir", dir, "err", err)
				return "", false
			}
			// Removed meanwhile: look further up.
		}
		if dir == filepath.Dir(dir) {
			return "", false
		}
		dir = filepath.Dir(dir)
	}
}
