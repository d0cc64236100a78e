package fswatch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// harness runs a Watcher over a temporary directory for one test.
type harness struct {
	t      *testing.T
	root   string // the temporary directory (the watched root unless told)
	w      *Watcher
	events chan Event
}

// start runs a Watcher with opts (Roots default to root) until the test
// ends, and returns once the Rescan event of its start has come.
func start(t *testing.T, root string, opts Options) *harness {
	t.Helper()
	if opts.Roots == nil {
		opts.Roots = []string{root}
	}
	h := &harness{t: t, root: root, events: make(chan Event, 100)}
	opts.OnEvent = func(e Event) { h.events <- e }
	h.w = New(opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v, want context.Canceled", err)
		}
	})
	if e := h.next("the start"); !e.Rescan {
		t.Fatalf("first event %+v, want the start's rescan", e)
	}
	return h
}

// next waits for the next event.
func (h *harness) next(what string) Event {
	h.t.Helper()
	select {
	case e := <-h.events:
		return e
	case <-time.After(10 * time.Second):
		h.t.Fatalf("%s: no event", what)
	}
	return Event{}
}

// until collects events until one reports the path sentinel (relative),
// and returns what they reported, relative to the root: a change that
// should not be reported is followed by a sentinel change that should,
// and nothing but the sentinel may come, without a sleep.
func (h *harness) until(what, sentinel string) (paths, dirs []string) {
	h.t.Helper()
	for {
		e := h.next(what)
		if e.Rescan {
			h.t.Fatalf("%s: unexpected rescan", what)
		}
		paths = append(paths, h.rel(e.Paths)...)
		dirs = append(dirs, h.rel(e.Dirs)...)
		if slices.Contains(paths, sentinel) {
			slices.Sort(paths)
			slices.Sort(dirs)
			return slices.Compact(paths), slices.Compact(dirs)
		}
	}
}

func (h *harness) rel(abs []string) []string {
	var out []string
	for _, p := range abs {
		r, err := filepath.Rel(h.root, p)
		if err != nil {
			h.t.Fatal(err)
		}
		out = append(out, filepath.ToSlash(r))
	}
	return out
}

// dirs lists the watched directories relative to the root.
func (h *harness) dirs() []string { return h.rel(h.w.Dirs()) }

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// skipNodeModules and ignoreScratch are a policy as the callers have one.
func skipNodeModules(dir string) bool { return filepath.Base(dir) == "node_modules" }
func ignoreScratch(p string) bool     { return ScratchFile(filepath.Base(p)) }

func TestWatcherReports(t *testing.T) {
	const sentinel = "sentinel.md"
	tests := []struct {
		name        string
		files       []string // present before the start
		ignoreChmod bool
		change      func(t *testing.T, root string)
		wantPaths   []string // besides the sentinel
		wantDirs    []string
		watched     []string // the watched directories afterwards
	}{
		{
			name:  "a file written",
			files: []string{"a.md"},
			change: func(t *testing.T, root string) {
				write(t, root, "a.md", "changed")
			},
			wantPaths: []string{"a.md"},
			watched:   []string{"."},
		},
		{
			name:  "a file removed",
			files: []string{"a.md"},
			change: func(t *testing.T, root string) {
				must(t, os.Remove(filepath.Join(root, "a.md")))
			},
			wantPaths: []string{"a.md"},
			watched:   []string{"."},
		},
		{
			name:  "an atomic save",
			files: []string{"d/a.md"},
			change: func(t *testing.T, root string) {
				write(t, root, "d/.a.md.tmp", "saved")
				must(t, os.Rename(filepath.Join(root, "d/.a.md.tmp"), filepath.Join(root, "d/a.md")))
			},
			wantPaths: []string{"d/a.md"},
			watched:   []string{".", "d"},
		},
		{
			name: "a new directory tree, written at once",
			change: func(t *testing.T, root string) {
				write(t, root, "skills/pdf/scripts/run.sh", "#!/bin/sh\n")
				write(t, root, "skills/pdf/SKILL.md", "---\nname: pdf\n---\n")
			},
			wantPaths: []string{"skills/pdf/SKILL.md", "skills/pdf/scripts/run.sh"},
			wantDirs:  []string{"skills", "skills/pdf", "skills/pdf/scripts"},
			watched:   []string{".", "skills", "skills/pdf", "skills/pdf/scripts"},
		},
		{
			name:  "a skipped directory is neither watched nor reported",
			files: []string{"node_modules/left/index.js"},
			change: func(t *testing.T, root string) {
				write(t, root, "node_modules/left/index.js", "changed")
				write(t, root, "src/node_modules/pad/index.js", "new")
			},
			wantDirs: []string{"src"},
			watched:  []string{".", "src"},
		},
		{
			name: "scratch files are not reported",
			change: func(t *testing.T, root string) {
				write(t, root, "notes.md~", "backup")
				write(t, root, ".#notes.md", "lock")
				write(t, root, "4913", "")
			},
			watched: []string{"."},
		},
		{
			name:  "a directory removed is no longer watched",
			files: []string{"memory/a.md", "memory/deep/b.md"},
			change: func(t *testing.T, root string) {
				must(t, os.RemoveAll(filepath.Join(root, "memory")))
			},
			wantPaths: []string{"memory", "memory/a.md", "memory/deep", "memory/deep/b.md"},
			watched:   []string{"."},
		},
		{
			name:  "a directory renamed is watched under its new name",
			files: []string{"old/a.md", "old/deep/b.md"},
			change: func(t *testing.T, root string) {
				must(t, os.Rename(filepath.Join(root, "old"), filepath.Join(root, "new")))
			},
			wantPaths: []string{"new/a.md", "new/deep/b.md", "old"},
			wantDirs:  []string{"new", "new/deep"},
			watched:   []string{".", "new", "new/deep"},
		},
		{
			name:  "a chmod is a change",
			files: []string{"run.sh"},
			change: func(t *testing.T, root string) {
				must(t, os.Chmod(filepath.Join(root, "run.sh"), 0o755))
			},
			wantPaths: []string{"run.sh"},
			watched:   []string{"."},
		},
		{
			name:        "a chmod is not, when told",
			files:       []string{"run.sh"},
			ignoreChmod: true,
			change: func(t *testing.T, root string) {
				must(t, os.Chmod(filepath.Join(root, "run.sh"), 0o755))
			},
			watched: []string{"."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for _, f := range tt.files {
				write(t, root, f, "x")
			}
			h := start(t, root, Options{Skip: skipNodeModules, Ignore: ignoreScratch, IgnoreChmod: tt.ignoreChmod, Delay: Constant(20 * time.Millisecond)})
			tt.change(t, root)
			write(t, root, sentinel, "x")
			paths, dirs := h.until(tt.name, sentinel)
			want := append(slices.Clone(tt.wantPaths), sentinel)
			slices.Sort(want)
			if !slices.Equal(paths, want) {
				t.Errorf("paths %q, want %q", paths, want)
			}
			if !slices.Equal(dirs, tt.wantDirs) {
				t.Errorf("dirs %q, want %q", dirs, tt.wantDirs)
			}
			if got := h.dirs(); !slices.Equal(got, tt.watched) {
				t.Errorf("watched %q, want %q", got, tt.watched)
			}
		})
	}
}

// A root that does not exist is waited for, and again after it is
// removed.
func TestWatcherMissingRoot(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, ".agents", "skills")
	h := start(t, root, Options{Delay: Constant(20 * time.Millisecond)})
	if got := h.w.Dirs(); len(got) != 0 {
		t.Fatalf("watched %q before the root exists", got)
	}
	write(t, base, "unrelated.md", "x") // beside the way to the root: not reported
	write(t, root, "pdf/SKILL.md", "x")
	paths, dirs := h.until("the root appeared", "pdf/SKILL.md")
	if !slices.Equal(paths, []string{"pdf/SKILL.md"}) || !slices.Equal(dirs, []string{".", "pdf"}) {
		t.Fatalf("the root appeared: paths %q dirs %q", paths, dirs)
	}
	if got := h.dirs(); !slices.Equal(got, []string{".", "pdf"}) {
		t.Fatalf("watched %q", got)
	}

	must(t, os.RemoveAll(filepath.Join(base, ".agents")))
	paths, _ = h.until("the root removed", ".")
	if !slices.Contains(paths, "pdf/SKILL.md") {
		t.Errorf("the root removed: paths %q, want its file among them", paths)
	}
	if got := h.w.Dirs(); len(got) != 0 {
		t.Errorf("watched %q after the root was removed", got)
	}
	write(t, root, "again/SKILL.md", "x")
	if paths, _ := h.until("the root appeared again", "again/SKILL.md"); !slices.Equal(paths, []string{"again/SKILL.md"}) {
		t.Errorf("the root appeared again: paths %q", paths)
	}
}

// Changes are batched by their delay: a burst is one event, reported
// once it has been quiet for its delay, or ten delays after its first
// change if it never stops.
func TestWatcherDebounce(t *testing.T) {
	root := t.TempDir()
	const fast, busy, slow = 30 * time.Millisecond, 100 * time.Millisecond, 300 * time.Millisecond
	delay := func(p string) time.Duration {
		switch {
		case strings.Contains(p, "memory"):
			return slow
		case strings.Contains(p, "busy"):
			return busy
		}
		return fast
	}
	h := start(t, root, Options{Delay: delay})

	// A burst of slow writes and a fast one: the fast one is reported on
	// its own, first; the burst once, at least its delay after its end.
	for i := range 5 {
		write(t, root, "memory/a.md", strings.Repeat("x", i))
		time.Sleep(10 * time.Millisecond)
	}
	write(t, root, "memory/b.md", "x")
	last := time.Now()
	write(t, root, "AGENTS.md", "x")
	if e := h.next("the fast change"); !slices.Equal(h.rel(e.Paths), []string{"AGENTS.md"}) {
		t.Fatalf("first event %q, want the fast change alone", h.rel(e.Paths))
	}
	e := h.next("the burst")
	if got := h.rel(e.Paths); !slices.Equal(got, []string{"memory/a.md", "memory/b.md"}) || !slices.Equal(h.rel(e.Dirs), []string{"memory"}) {
		t.Fatalf("burst reported as %q %q", got, h.rel(e.Dirs))
	}
	if age := time.Since(last); age < slow {
		t.Errorf("burst reported %v after its end, before its delay %v", age, slow)
	}

	// A file rewritten without pause is still reported, ten delays after
	// its first change.
	stop := make(chan struct{})
	writing := make(chan struct{})
	first := time.Now()
	go func() {
		defer close(writing)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := os.WriteFile(filepath.Join(root, "busy.md"), []byte(strings.Repeat("y", i%10)), 0o644); err != nil {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	e = h.next("a file rewritten without pause")
	took := time.Since(first)
	close(stop)
	<-writing
	if !slices.Equal(h.rel(e.Paths), []string{"busy.md"}) {
		t.Errorf("rewritten file reported as %q", h.rel(e.Paths))
	}
	// Without the limit it would come only when the writer stalls for a
	// delay (which a loaded machine may make it do, so no lower bound).
	if took > 10*busy+2*time.Second {
		t.Errorf("rewritten file reported after %v, want about %v", took, 10*busy)
	}
}

// After lost events (a queue overflow) every root is walked again: a
// directory whose creation went unseen is watched, and one Rescan event
// tells. Rescan does the same on request, and stops watching what the
// policy now skips.
func TestWatcherRescan(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a/x.md", "x")
	write(t, root, "b/y.md", "y")
	var skipB atomic.Bool
	h := start(t, root, Options{
		Skip:  func(dir string) bool { return skipB.Load() && filepath.Base(dir) == "b" },
		Delay: Constant(20 * time.Millisecond),
	})
	// Lose the watch of a/ as if its creation had not been seen.
	h.w.mu.Lock()
	must(t, h.w.fw.Remove(filepath.Join(root, "a")))
	delete(h.w.dirs, filepath.Join(root, "a"))
	h.w.mu.Unlock()
	write(t, root, "a/unseen.md", "x")

	tests := []struct {
		name    string
		rescan  func()
		watched []string
		seen    string // a change seen after the rescan
	}{
		{"overflow", func() { h.w.fw.Errors <- fsnotify.ErrEventOverflow }, []string{".", "a", "b"}, "a/seen.md"},
		{"requested, with b/ now skipped", func() { skipB.Store(true); h.w.Rescan() }, []string{".", "a"}, "a/seen-again.md"},
	}
	for _, tt := range tests {
		tt.rescan()
		if e := h.next(tt.name); !e.Rescan || e.Paths != nil || e.Dirs != nil {
			t.Fatalf("%s: event %+v, want a bare rescan", tt.name, e)
		}
		if got := h.dirs(); !slices.Equal(got, tt.watched) {
			t.Errorf("%s: watched %q, want %q", tt.name, got, tt.watched)
		}
		write(t, root, "b/y.md", "changed") // seen only while b/ is watched
		write(t, root, tt.seen, "x")
		paths, _ := h.until(tt.name, tt.seen)
		want := []string{tt.seen}
		if !skipB.Load() {
			want = []string{tt.seen, "b/y.md"}
			slices.Sort(want)
		}
		if !slices.Equal(paths, want) {
			t.Errorf("%s: after the rescan %q, want %q", tt.name, paths, want)
		}
	}
}

// Several roots are watched at once; a change outside them is not
// reported, nor is the lookout above a missing root watched as a root.
func TestWatcherRoots(t *testing.T) {
	base := t.TempDir()
	one, two, missing := filepath.Join(base, "one"), filepath.Join(base, "two"), filepath.Join(base, "three", "skills")
	write(t, one, "a.md", "x")
	write(t, two, "b.md", "x")
	h := start(t, base, Options{Roots: []string{one, two, missing}, Delay: Constant(20 * time.Millisecond)})
	if got := h.dirs(); !slices.Equal(got, []string{"one", "two"}) {
		t.Fatalf("watched %q", got)
	}
	write(t, base, "outside.md", "x")
	write(t, one, "a.md", "y")
	write(t, two, "b.md", "y")
	if paths, _ := h.until("changes in two roots", "two/b.md"); !slices.Contains(paths, "one/a.md") || slices.Contains(paths, "outside.md") {
		t.Errorf("paths %q", paths)
	}
}

// Run ends when its context does, and fails for a root it cannot watch.
func TestWatcherRunEnds(t *testing.T) {
	w := New(Options{Roots: []string{t.TempDir()}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not end")
	}
}

func TestScratchFile(t *testing.T) {
	tests := []struct {
		base string
		want bool
	}{
		{"notes.md~", true}, {".notes.md.swp", true}, {".notes.md.swx", true}, {".#notes.md", true},
		{"4913", true}, {"x.tmp", true}, {"notes.md", false}, {"SKILL.md", false}, {".gitignore", false},
	}
	for _, tt := range tests {
		if got := ScratchFile(tt.base); got != tt.want {
			t.Errorf("ScratchFile(%q) = %v, want %v", tt.base, got, tt.want)
		}
	}
}
