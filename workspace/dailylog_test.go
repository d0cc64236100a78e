package workspace_test

import (
	"testing"
	"time"

	"github.com/quirehq/quire/internal/testenv"
	"github.com/quirehq/quire/workspace"
)

// The rule itself, over the shared table: LogDate, IsDailyLog, KindOf and
// the repository form agree with each row.
func TestDailyLogRule(t *testing.T) {
	for _, c := range testenv.DailyLogCases(t) {
		day, ok := workspace.LogDate(c.Path)
		if ok != c.IsLog() || !day.Equal(c.Day) {
			t.Errorf("LogDate(%q) = %v, %v; want %v, %v", c.Path, day, ok, c.Day, c.IsLog())
		}
		if got := workspace.IsDailyLog(c.Path); got != c.IsLog() {
			t.Errorf("IsDailyLog(%q) = %v", c.Path, got)
		}
		if got := workspace.KindOf(c.Path) == workspace.KindDailyLog; got != c.IsLog() {
			t.Errorf("KindOf(%q) = %v", c.Path, workspace.KindOf(c.Path))
		}
		if c.IsLog() {
			if name := workspace.DailyLog(c.Day); name != c.Path[len(c.Path)-len(name):] {
				t.Errorf("DailyLog(%v) = %q, not the end of %q", c.Day, name, c.Path)
			}
		}
	}
}

func TestDailyLogName(t *testing.T) {
	d := time.Date(2026, 3, 4, 23, 30, 0, 0, time.FixedZone("x", -5*3600))
	if got := workspace.DailyLog(d); got != "memory/2026-03-04.md" {
		t.Errorf("DailyLog = %q, want the day in d's own zone", got)
	}
}

func FuzzLogDate(f *testing.F) {
	for _, s := range []string{"memory/2026-01-02.md", "memory/2026-13-45.md", "users/a/memory/2024-02-29.md", "memory/9999-12-31.md"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		day, ok := workspace.LogDate(p)
		if !ok {
			return
		}
		// A log's name is the name of its day: the rule round-trips.
		name := workspace.DailyLog(day)
		if len(p) < len(name) || p[len(p)-len(name):] != name {
			t.Fatalf("LogDate(%q) = %v, whose log is %q", p, day, name)
		}
	})
}
