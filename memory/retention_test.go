package memory

import (
	"slices"
	"testing"
	"testing/fstest"
	"time"
)

func TestExpiredLogs(t *testing.T) {
	fsys := fstest.MapFS{
		"a/memory/2026-10-23.md":                         {},
		"a/memory/2026-10-24.md":                         {},
		"a/memory/notes.md":                              {},
		"a/memory/2020-01-01.md.bak":                     {},
		"a/users/bob%40example.com/memory/2026-01-01.md": {},
		"a/MEMORY.md":                                    {},
	}
	today := time.Date(2026, 11, 23, 23, 0, 0, 0, time.UTC)
	got := ExpiredLogs(fsys, "a", 30, today)
	want := []string{"a/memory/2026-10-23.md", "a/users/bob%40example.com/memory/2026-01-01.md"}
	if !slices.Equal(got, want) {
		t.Errorf("ExpiredLogs = %v, want %v (a log exactly 30 days old stays)", got, want)
	}
	if got := ExpiredLogs(fsys, "a", 0, today); got != nil {
		t.Errorf("retention 0 keeps every log, got %v", got)
	}
}
