package gitsync

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// Names lists the hosted repositories, sorted.
func (h *Host) Names() ([]string, error) {
	des, err := os.ReadDir(h.dir)
	if err != nil {
		return nil, fmt.Errorf("list repositories: %w", err)
	}
	var out []string
	for _, de := range des {
		name, ok := strings.CutSuffix(de.Name(), ".git")
		if ok && de.IsDir() && ValidRepoName(name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// RepackThreshold is the number of loose objects above which Maintain
// repacks a repository.
const RepackThreshold = 1000

// Maintain repacks, every interval, each hosted repository holding more
// than threshold loose objects (go-git writes only loose objects; 10,000
// of them take ~79 MB), until ctx is done. Failures are logged.
func (h *Host) Maintain(ctx context.Context, interval time.Duration, threshold int) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		h.repackAll(ctx, threshold)
	}
}

// repackAll repacks every hosted repository over threshold loose objects.
func (h *Host) repackAll(ctx context.Context, threshold int) {
	names, err := h.Names()
	if err != nil {
		h.opts.Logger.Warn("maintain", "err", err)
		return
	}
	for _, name := range names {
		if ctx.Err() != nil {
			return
		}
		r, err := h.Repository(name)
		if err != nil {
			h.opts.Logger.Warn("maintain", "repo", name, "err", err)
			continue
		}
		n, err := r.LooseObjects()
		if err != nil || n <= threshold {
			continue
		}
		start := time.Now()
		if err := r.Repack(); err != nil {
			h.opts.Logger.Warn("repack", "repo", name, "err", err)
			continue
		}
		h.opts.Logger.Info("repacked", "repo", name, "loose", n, "took", time.Since(start))
	}
}
