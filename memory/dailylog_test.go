package memory_test

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/quirehq/quire/internal/testenv"
	"github.com/quirehq/quire/memory"
)

// The index dates exactly the daily logs of the shared table, and
// retention prunes exactly them.
func TestDailyLogRuleIndexAndRetention(t *testing.T) {
	cases := testenv.DailyLogCases(t)
	fsys := fstest.MapFS{}
	var logs []string
	for _, c := range cases {
		fsys[c.Path] = &fstest.MapFile{Data: []byte("an entry\n")}
		words := memory.DateWords(c.Path)
		if c.IsLog() {
			logs = append(logs, c.Path)
			if !strings.HasPrefix(words, c.Day.Format(time.DateOnly)+" ") {
				t.Errorf("the index dates %q %q, want %s", c.Path, words, c.Day.Format(time.DateOnly))
			}
		} else if words != "" {
			t.Errorf("the index dates %q, which is not a daily log: %q", c.Path, words)
		}
	}
	slices.Sort(logs)
	got := memory.ExpiredLogs(fsys, ".", 1, time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC))
	if !slices.Equal(got, logs) {
		t.Errorf("retention prunes %q\nwant the daily logs %q", got, logs)
	}
}
