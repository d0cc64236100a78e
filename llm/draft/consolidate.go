package draft

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/quirehq/quire/llm"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/workspace"
)

//go:embed prompts/consolidate.md
var consolidateSystem string

//go:embed prompts/consolidate_user.md
var consolidateUser string

// DefaultDays is how many days of daily logs a consolidation reads when
// none is given.
const DefaultDays = 7

// maxLogChars bounds the daily logs sent: the most recent are kept.
const maxLogChars = 200000

// ConsolidateRequest asks for an agent's MEMORY.md distilled from its
// recent daily logs.
type ConsolidateRequest struct {
	Agent *prompt.Agent
	// Days of daily logs to read, today included (0: DefaultDays).
	Days int
	// Today is the day the logs are counted back from, in the agent's
	// time zone.
	Today time.Time
}

// ErrNothingToConsolidate is the error of a consolidation with no daily
// logs in its days, or whose answer changes nothing.
var ErrNothingToConsolidate = errors.New("nothing to consolidate")

// Log is one daily log.
type Log struct {
	Path    string // in the tree
	Day     time.Time
	Content []byte
}

// RecentLogs are the agent-level daily logs of dir in the days up to
// today (today included), oldest first.
func RecentLogs(fsys fs.FS, dir string, days int, today time.Time) []Log {
	to := time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, time.UTC)
	from := to.AddDate(0, 0, -(days - 1))
	entries, _ := fs.ReadDir(fsys, path.Join(dir, workspace.MemoryDir))
	var out []Log
	for _, e := range entries {
		rel := path.Join(workspace.MemoryDir, e.Name())
		day, ok := workspace.LogDate(rel)
		if e.IsDir() || !ok || day.Before(from) || day.After(to) {
			continue
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, rel))
		if err != nil || len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		out = append(out, Log{Path: path.Join(dir, rel), Day: day, Content: b})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Day.Before(out[j].Day) })
	total := 0
	for i := len(out) - 1; i >= 0; i-- {
		total += len(out[i].Content)
		if total > maxLogChars {
			return out[i+1:]
		}
	}
	return out
}

// ConsolidateMessages is the conversation a consolidation sends.
func ConsolidateMessages(name string, memory []byte, logs []Log, limit int) []llm.Message {
	var lb strings.Builder
	for _, l := range logs {
		fmt.Fprintf(&lb, "\n<log date=%q>\n%s\n</log>\n", l.Day.Format(time.DateOnly), strings.TrimSpace(string(l.Content)))
	}
	from, to := "", ""
	if len(logs) > 0 {
		from, to = logs[0].Day.Format(time.DateOnly), logs[len(logs)-1].Day.Format(time.DateOnly)
	}
	mem := strings.TrimSpace(string(memory))
	if mem == "" {
		mem = "(empty: there is no MEMORY.md yet)"
	}
	r := strings.NewReplacer("{{NAME}}", name, "{{MEMORY}}", mem, "{{FROM}}", from, "{{TO}}", to,
		"{{LOGS}}", lb.String(), "{{LIMIT}}", strconv.Itoa(limit))
	return []llm.Message{{Role: "system", Content: r.Replace(consolidateSystem)}, {Role: "user", Content: r.Replace(consolidateUser)}}
}

// memoryPath is the agent's MEMORY.md (memory.md when only that one
// exists) and its content.
func memoryPath(fsys fs.FS, dir string) (string, []byte) {
	p := path.Join(dir, workspace.MemoryFile)
	if b, err := fs.ReadFile(fsys, p); err == nil {
		return p, b
	}
	fb := path.Join(dir, workspace.MemoryFallbackFile)
	if b, err := fs.ReadFile(fsys, fb); err == nil {
		return fb, b
	}
	return p, nil
}

// Consolidate asks m for the agent's MEMORY.md with its recent daily logs
// distilled into it, checked on base.
func Consolidate(ctx context.Context, m Model, base fs.FS, req ConsolidateRequest) (*Draft, error) {
	a := req.Agent
	days := req.Days
	if days <= 0 {
		days = DefaultDays
	}
	logs := RecentLogs(base, a.Dir, days, req.Today)
	if len(logs) == 0 {
		return nil, fmt.Errorf("%w: agent %q has no daily logs in the %d days to %s", ErrNothingToConsolidate, a.Name, days, req.Today.Format(time.DateOnly))
	}
	target, current := memoryPath(base, a.Dir)
	limit := min(a.Config.Budget.PerFileChars, workspace.MaxFileBytes)
	answer, err := m.Complete(ctx, ConsolidateMessages(a.Name, current, logs, limit))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrModel, err)
	}
	files, probs := Parse(answer, []string{workspace.MemoryFile})
	if workspace.HasErrors(probs) {
		return nil, &InvalidError{What: "the consolidated MEMORY.md", Problems: probs}
	}
	next := files[workspace.MemoryFile]
	if bytes.Equal(bytes.TrimSpace(next), bytes.TrimSpace(current)) {
		return nil, fmt.Errorf("%w: the model left %s as it is", ErrNothingToConsolidate, target)
	}
	d := &Draft{Dir: a.Dir, Files: map[string][]byte{target: next}}
	if d.Warnings, err = check(ctx, base, d, "the consolidated MEMORY.md"); err != nil {
		return nil, err
	}
	return d, nil
}
