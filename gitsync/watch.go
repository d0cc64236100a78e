package gitsync

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/quirehq/quire/prompt/workspace"
)

// The debounce delays of a work-tree watcher.
const (
	// SkillsDelay is how long a skill file must stay unchanged before it
	// is reported.
	SkillsDelay = 500 * time.Millisecond
	// MemoryDelay is the same for memory files, which agents and editors
	// write in bursts.
	MemoryDelay = 1500 * time.Millisecond
)

// Watcher reports changes to the files of a working tree as
// SourceWorkTree events. It watches every directory (walking new ones as
// they appear), ignores .git and editor scratch files, sees atomic saves
// (write to a temporary name, rename over the file) as a change of the
// file, rescans after the kernel queue overflows, and debounces: changes
// are batched by their delay (SkillsDelay for skills and other files,
// MemoryDelay for memory files) and a batch is reported once it has been
// quiet for that delay.
type Watcher struct {
	// Root is the directory watched.
	Root string
	// OnEvent receives the batched changes.
	OnEvent func(Event)
	// Logger receives watch errors; nil discards.
	Logger *slog.Logger
	// Delay, when set, overrides the delay for a path (tests).
	Delay func(path string) time.Duration

	// inject, in tests, feeds errors as if from fsnotify (nil otherwise).
	inject chan error
}

// DelayFor is the default debounce delay for a slash-separated path
// relative to the watched root.
func DelayFor(p string) time.Duration {
	if isMemoryPath(p) {
		return MemoryDelay
	}
	return SkillsDelay
}

// isMemoryPath reports whether p, relative to a repository whose agent
// directories the watcher does not know, is a memory document of some
// agent: some tail of it is one (workspace.KindOf).
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

// ignored reports paths the watcher never reports: anything under .git
// and common editor scratch files.
func ignored(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		if part == ".git" {
			return true
		}
	}
	base := path.Base(rel)
	return strings.HasSuffix(base, "~") || strings.HasSuffix(base, ".swp") || strings.HasSuffix(base, ".swx") ||
		strings.HasPrefix(base, ".#") || base == "4913" || strings.HasSuffix(base, ".tmp")
}

// Run watches until ctx is done. Once its watches are in place it reports
// a Rescan: whatever changed before then had no watch to see it (a file
// saved while the daemon was deploying the tree, say).
func (w *Watcher) Run(ctx context.Context) error {
	log := w.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	delay := w.Delay
	if delay == nil {
		delay = DelayFor
	}
	root, err := filepath.Abs(w.Root)
	if err != nil {
		return fmt.Errorf("watch %s: %w", w.Root, err)
	}
	fw, err := fsnotify.NewBufferedWatcher(1024)
	if err != nil {
		return fmt.Errorf("watch %s: %w", root, err)
	}
	defer fw.Close()
	if _, err := w.addTree(fw, root, root); err != nil {
		return err
	}
	w.emit(Event{Source: SourceWorkTree, Name: root, Rescan: true})

	// pending holds, per changed path, when it last changed. Paths are
	// batched by their delay: a batch is reported once its newest change
	// is that delay old, or its oldest change ten delays old (so a file
	// rewritten without pause is still reported).
	pending := map[string]time.Time{}
	rescan := time.Time{} // when a pending rescan is due
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	type batch struct{ first, last time.Time }
	batches := func() map[time.Duration]*batch {
		out := map[time.Duration]*batch{}
		for p, t := range pending {
			d := delay(p)
			b, ok := out[d]
			if !ok {
				out[d] = &batch{first: t, last: t}
				continue
			}
			if t.Before(b.first) {
				b.first = t
			}
			if t.After(b.last) {
				b.last = t
			}
		}
		return out
	}
	readyAt := func(d time.Duration, b *batch) time.Time {
		at := b.last.Add(d)
		if cap := b.first.Add(10 * d); cap.Before(at) {
			at = cap
		}
		return at
	}
	arm := func() {
		var next time.Time
		for d, b := range batches() {
			if at := readyAt(d, b); next.IsZero() || at.Before(next) {
				next = at
			}
		}
		if !rescan.IsZero() && (next.IsZero() || rescan.Before(next)) {
			next = rescan
		}
		if !next.IsZero() {
			timer.Reset(max(time.Until(next), 0))
		}
	}
	onErr := func(err error) {
		if errors.Is(err, fsnotify.ErrEventOverflow) {
			// Events were lost: rescan (and watch any directories
			// missed) once things calm down.
			d := SkillsDelay
			if w.Delay != nil {
				d = w.Delay("")
			}
			rescan = time.Now().Add(d)
			arm()
			return
		}
		log.Warn("watch", "root", root, "err", err)
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-fw.Events:
			if !ok {
				return nil
			}
			rel, err := filepath.Rel(root, ev.Name)
			if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
				continue
			}
			rel = filepath.ToSlash(rel)
			if ignored(rel) {
				continue
			}
			if ev.Has(fsnotify.Create) {
				if info, err := os.Lstat(ev.Name); err == nil && info.IsDir() {
					// A new directory: watch it and report what is already in it.
					files, err := w.addTree(fw, root, ev.Name)
					if err != nil {
						log.Warn("watch new directory", "dir", ev.Name, "err", err)
					}
					for _, f := range files {
						pending[f] = time.Now()
					}
					arm()
					continue
				}
			}
			pending[rel] = time.Now()
			arm()
		case err := <-w.inject:
			onErr(err)
		case err, ok := <-fw.Errors:
			if !ok {
				return nil
			}
			onErr(err)
		case <-timer.C:
			now := time.Now()
			if !rescan.IsZero() && !rescan.After(now) {
				rescan = time.Time{}
				if _, err := w.addTree(fw, root, root); err != nil {
					log.Warn("rescan", "root", root, "err", err)
				}
				clear(pending)
				w.emit(Event{Source: SourceWorkTree, Name: root, Rescan: true})
				continue
			}
			ready := map[time.Duration]bool{}
			for d, b := range batches() {
				if !readyAt(d, b).After(now) {
					ready[d] = true
				}
			}
			var paths []string
			for p := range pending {
				if ready[delay(p)] {
					paths = append(paths, p)
					delete(pending, p)
				}
			}
			arm()
			if len(paths) > 0 {
				slices.Sort(paths)
				w.emit(Event{Source: SourceWorkTree, Name: root, Paths: paths})
			}
		}
	}
}

func (w *Watcher) emit(e Event) {
	if w.OnEvent != nil {
		w.OnEvent(e)
	}
}

// addTree watches dir and every directory below it except .git, and
// returns the files found, relative to root.
func (w *Watcher) addTree(fw *fsnotify.Watcher, root, dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil // vanished meanwhile
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			if err := fw.Add(p); err != nil {
				return fmt.Errorf("watch %s: %w", p, err)
			}
			return nil
		}
		if !ignored(rel) {
			files = append(files, rel)
		}
		return nil
	})
	return files, err
}
