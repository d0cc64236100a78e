package testenv

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// DailyLogCase is one row of the daily-log table
// (workspace/testdata/dailylogs.txt): a path relative to an agent
// directory and the day it is the log of (zero when it is not one).
type DailyLogCase struct {
	Path string
	Day  time.Time
}

// IsLog reports whether the row's path is a daily log.
func (c DailyLogCase) IsLog() bool { return !c.Day.IsZero() }

// DailyLogCases reads the daily-log table every reader of daily logs is
// tested against, so they all give one answer.
func DailyLogCases(t testing.TB) []DailyLogCase {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	name := filepath.Join(filepath.Dir(file), "..", "..", "workspace", "testdata", "dailylogs.txt")
	f, err := os.Open(name)
	if err != nil {
		t.Fatalf("the daily-log table: %v", err)
	}
	defer f.Close()
	var cases []DailyLogCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if len(fields) != 2 {
			t.Fatalf("%s: %q: want a path and a day or -", name, sc.Text())
		}
		c := DailyLogCase{Path: fields[0]}
		if fields[1] != "-" {
			if c.Day, err = time.Parse(time.DateOnly, fields[1]); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil || len(cases) < 10 {
		t.Fatalf("%s: %d rows, %v", name, len(cases), err)
	}
	return cases
}
