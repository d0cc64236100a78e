package daemon

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/workspace"
)

// pruneLoop deletes daily logs older than each agent's retention, soon
// after start and then every PruneInterval.
func (wr *writer) pruneLoop(ctx context.Context) error {
	t := time.NewTimer(min(time.Minute, wr.pruneInterval))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		for _, r := range wr.sources.agentRefs() {
			if err := wr.pruneDailyLogs(ctx, r); err != nil {
				wr.log.Warn("pruning daily logs failed", "agent", r.ag.agent.Name, "err", err)
			}
		}
		t.Reset(wr.pruneInterval)
	}
}

// pruneDailyLogs deletes the agent's (and its users') daily logs older
// than daily_log_retention_days in one commit.
func (wr *writer) pruneDailyLogs(ctx context.Context, ref agentRef) error {
	cfg := ref.ag.agent.Config
	if cfg.DailyLogRetentionDays <= 0 {
		return nil
	}
	loc := cfg.Location
	if loc == nil {
		loc = time.UTC
	}
	today := wr.now().In(loc)
	agentDir := ref.ag.agent.Dir
	var pruned []string
	build := func(fsys fs.FS) ([]gitsync.FileWrite, error) {
		pruned = memory.ExpiredLogs(fsys, agentDir, cfg.DailyLogRetentionDays, today)
		var writes []gitsync.FileWrite
		for _, p := range pruned {
			writes = append(writes, gitsync.FileWrite{Path: p, Delete: true})
		}
		return writes, nil
	}
	name := ref.ag.agent.Name
	c, err := wr.commitChange(ctx, ref, "", fmt.Sprintf("%s: prune daily logs older than %d days", name, cfg.DailyLogRetentionDays),
		gitsync.WriteKey{Path: workspace.MemoryDir}, build)
	if err != nil || c.commit == "" {
		return err
	}
	commit := c.commit
	wr.log.Info("pruned daily logs past their retention", "agent", name, "retention_days", cfg.DailyLogRetentionDays,
		"commit", commit, "files", pruned)
	wr.events.publish(api.Event{Type: "prune", Agent: name, Source: ref.src.id(), Commit: commit,
		Message: fmt.Sprintf("pruned %d daily logs older than %d days (daily_log_retention_days): %s", len(pruned), cfg.DailyLogRetentionDays, strings.Join(pruned, ", "))})
	return nil
}
