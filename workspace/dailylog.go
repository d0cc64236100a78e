package workspace

import (
	"strings"
	"time"
)

// The daily-log rule, for every reader: the prompt (which logs it
// injects, agent.yaml's order), the memory index (a hit's date),
// retention (which logs it prunes), the merge (which files it unions)
// and MCP (a hit's date). A daily log is memory/YYYY-MM-DD.md directly
// in an agent's directory or in a user's directory under it, named for a
// real calendar date. memory/notes/2026-01-02.md (nested),
// memory/2026-13-45.md (no such date) and memory/2026-01-02.txt are plain
// memory documents.

// logLayout is the date format of a daily log's name.
const logLayout = time.DateOnly

// DailyLog is the path, relative to an agent or user directory, of the
// daily log of day d (in d's location): memory/YYYY-MM-DD.md.
func DailyLog(d time.Time) string {
	var buf [len(MemoryDir) + len("/2006-01-02.md")]byte
	b := d.AppendFormat(append(buf[:0], MemoryDir+"/"...), logLayout)
	return string(append(b, ".md"...))
}

// LogDate returns the day of a daily log, as midnight UTC, and whether rel
// is one. rel is a slash path relative to an agent directory:
// memory/YYYY-MM-DD.md, or users/<dir>/memory/YYYY-MM-DD.md for a user's
// log.
func LogDate(rel string) (time.Time, bool) {
	if _, rest, ok := SplitUser(rel); ok {
		rel = rest
	}
	return logDate(rel)
}

// IsDailyLog reports whether rel, relative to an agent or user directory,
// is a daily log (LogDate).
func IsDailyLog(rel string) bool {
	_, ok := LogDate(rel)
	return ok
}

// logDate applies the rule to rel, relative to the directory that holds
// memory/.
func logDate(rel string) (time.Time, bool) {
	name, ok := strings.CutPrefix(rel, MemoryDir+"/")
	if !ok || len(name) != len("2006-01-02.md") || !strings.HasSuffix(name, ".md") || name[4] != '-' || name[7] != '-' {
		return time.Time{}, false
	}
	num := func(s string) int {
		n := 0
		for _, c := range []byte(s) {
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	y, m, d := num(name[:4]), num(name[5:7]), num(name[8:10])
	day := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if y < 0 || m < 1 || d < 1 || day.Month() != time.Month(m) || day.Day() != d {
		return time.Time{}, false // 2026-13-45, 2026-02-30: no such day
	}
	return day, true
}
