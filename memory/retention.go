package memory

import (
	"io/fs"
	"path"
	"sort"
	"time"

	"github.com/quirehq/quire/workspace"
)

// ExpiredLogs returns the daily logs (memory/YYYY-MM-DD.md of the agent
// and of each users/<dir>/) in the agent directory dir of fsys whose date
// is more than days before today (a date in the agent's time zone), as
// slash paths of fsys, sorted: what daily_log_retention_days would prune.
// days ≤ 0 keeps every log.
func ExpiredLogs(fsys fs.FS, dir string, days int, today time.Time) []string {
	if days <= 0 {
		return nil
	}
	cutoff := time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, -days)
	dirs := []string{path.Join(dir, workspace.MemoryDir)}
	users, _ := fs.ReadDir(fsys, path.Join(dir, workspace.UsersDir))
	for _, u := range users {
		if u.IsDir() {
			dirs = append(dirs, path.Join(dir, workspace.UsersDir, u.Name(), workspace.MemoryDir))
		}
	}
	var out []string
	for _, d := range dirs {
		entries, _ := fs.ReadDir(fsys, d)
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			if day, ok := workspace.LogDate(workspace.MemoryDir + "/" + e.Name()); ok && day.Before(cutoff) {
				out = append(out, path.Join(d, e.Name()))
			}
		}
	}
	sort.Strings(out)
	return out
}
