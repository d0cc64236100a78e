package gitsync

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestWatcher(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{".git/HEAD": "ref: refs/heads/main\n", "AGENTS.md": "a\n", "memory/old.md": "x\n"})
	events := make(chan Event, 20)
	w := &Watcher{Root: root, OnEvent: func(e Event) { events <- e }, Delay: func(p string) time.Duration {
		if strings.HasPrefix(p, "memory/") {
			return 400 * time.Millisecond
		}
		return 100 * time.Millisecond
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	// Once its watches are in place it reports a rescan: what changed
	// before then could not be seen.
	select {
	case e := <-events:
		if !e.Rescan || e.Paths != nil {
			t.Fatalf("first event %+v, want the start's rescan", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no rescan at the start")
	}

	next := func(what string) (Event, time.Duration) {
		t.Helper()
		start := time.Now()
		select {
		case e := <-events:
			return e, time.Since(start)
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no event", what)
		}
		return Event{}, 0
	}
	quiet := func(what string) {
		t.Helper()
		select {
		case e := <-events:
			t.Fatalf("%s: unexpected event %+v", what, e)
		case <-time.After(600 * time.Millisecond):
		}
	}
	write := func(rel, content string) { writeFiles(t, root, map[string]string{rel: content}) }

	tests := []struct {
		name   string
		change func()
		want   []string
		minAge time.Duration
	}{
		{"edit", func() { write("AGENTS.md", "b\n") }, []string{"AGENTS.md"}, 0},
		{"new directory tree", func() {
			if err := os.MkdirAll(filepath.Join(root, "skills/pdf/scripts"), 0o755); err != nil {
				t.Fatal(err)
			}
			write("skills/pdf/SKILL.md", "---\nname: pdf\n---\n")
			write("skills/pdf/scripts/run.sh", "#!/bin/sh\n")
		}, []string{"skills/pdf/SKILL.md", "skills/pdf/scripts/run.sh"}, 0},
		{"atomic save", func() {
			write("memory/.new.md.tmp", "saved\n")
			if err := os.Rename(filepath.Join(root, "memory/.new.md.tmp"), filepath.Join(root, "memory/new.md")); err != nil {
				t.Fatal(err)
			}
		}, []string{"memory/new.md"}, 300 * time.Millisecond},
		{"burst of memory writes", func() {
			for i := range 5 {
				write("memory/old.md", strings.Repeat("y", i))
				time.Sleep(50 * time.Millisecond) // spread over the debounce: the burst under test
			}
		}, []string{"memory/old.md"}, 300 * time.Millisecond},
		{"delete", func() {
			if err := os.Remove(filepath.Join(root, "AGENTS.md")); err != nil {
				t.Fatal(err)
			}
		}, []string{"AGENTS.md"}, 0},
	}
	for _, tt := range tests {
		tt.change()
		e, age := next(tt.name)
		if e.Source != SourceWorkTree || !slices.Equal(e.Paths, tt.want) {
			t.Errorf("%s: event %s %v, want %v", tt.name, e.Source, e.Paths, tt.want)
		}
		if age < tt.minAge {
			t.Errorf("%s: reported after %v, before its %v debounce", tt.name, age, tt.minAge)
		}
		quiet(tt.name + " (one event per burst)")
	}
	write(".git/index", "changed")
	write("notes.md~", "backup")
	quiet(".git and editor backups are ignored")

	// A rescan (what the shared watcher does after a queue overflow, see
	// internal/fswatch) makes one rescan event; watching goes on
	// after. w.core was set before the first event.
	w.core.Rescan()
	if e, _ := next("overflow"); !e.Rescan || e.Paths != nil {
		t.Fatalf("overflow: event %+v, want a rescan", e)
	}
	write("skills/late/SKILL.md", "x\n")
	if e, _ := next("after rescan"); !slices.Equal(e.Paths, []string{"skills/late/SKILL.md"}) {
		t.Fatalf("after rescan: %v", e.Paths)
	}

	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Run returned %v", err)
	}
}
