package gitsync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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

// PacksPerRepack is the number of packs written (one per commit, push or
// fetch) after which a repository is repacked.
const PacksPerRepack = 64

// packCount is the number of packs in r (0 when they cannot be listed).
func (r *Repository) packCount() int {
	packs, _ := listPacks(r.st.packDir)
	return len(packs)
}

// packWritten wakes Maintain once r has written PacksPerRepack packs.
func (h *Host) packWritten(r *Repository) {
	if r.PacksWritten() >= PacksPerRepack {
		select {
		case h.maintain <- struct{}{}:
		default:
		}
	}
}

// Maintain repacks hosted repositories until ctx is done: every interval
// each one holding more than threshold loose objects (see Repack), and,
// as soon as a repository has written PacksPerRepack packs, that one's
// small packs (see RollUp); every interval too, each one with more than
// PacksPerRepack/2 packs (what RollUp leaves: the packs of more than
// rollUpMax objects pile up). Repacks do not
// block commits or pushes (see Repack). Every interval, each open
// repository is verified too (see Verify): damage found since the last
// check is logged at ERROR; and what a crash left is removed (see
// RemoveTemporaries). Failures are logged.
func (h *Host) Maintain(ctx context.Context, interval time.Duration, threshold int) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		all := false
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			all = true
		case <-h.maintain:
		}
		h.repackAll(ctx, threshold, all)
	}
}

// repackAll rolls up the small packs of the hosted repositories that
// wrote PacksPerRepack packs, and with all repacks those over threshold
// loose objects or packs written.
func (h *Host) repackAll(ctx context.Context, threshold int, all bool) {
	names, err := h.Names()
	if err != nil {
		h.opts.Logger.Warn("maintain", "err", err)
		return
	}
	for _, name := range names {
		if ctx.Err() != nil {
			return
		}
		h.mu.Lock()
		r, open := h.repos[name]
		h.mu.Unlock()
		if !open && !all {
			continue
		}
		if !open {
			if r, err = h.Repository(name); err != nil {
				h.opts.Logger.Warn("maintain", "repo", name, "err", err)
				continue
			}
		}
		packs := r.PacksWritten()
		loose := 0
		if all {
			loose, _ = r.LooseObjects()
			h.verify(ctx, name, r)
			r.RemoveTemporaries()
		}
		whole := all && (loose > threshold || packs > int64(threshold) || r.packCount() > PacksPerRepack/2)
		if packs < PacksPerRepack && !whole {
			continue
		}
		start := time.Now()
		repack := r.RollUp
		if whole {
			repack = r.RepackContext
		}
		if err := repack(ctx); err != nil {
			h.opts.Logger.Warn("repack", "repo", name, "err", err)
			continue
		}
		h.opts.Logger.Debug("repacked", "repo", name, "packs", packs, "loose", loose, "whole", whole, "took", time.Since(start))
	}
}

// RepairHosted is what a damaged hosted repository's log lines say to
// do; reposDir is the directory of the hosted repositories.
func RepairHosted(reposDir string) string {
	return "stop quire serve, then run quire doctor --repos " + reposDir + " for how to repair it"
}

// Verify checks the hosted repository name (see Repository.Verify),
// logs its damage at ERROR when it differs from what the last check
// found (and at INFO when it is gone), and returns it.
func (h *Host) Verify(ctx context.Context, name string) error {
	r, err := h.Repository(name)
	if err != nil {
		return err
	}
	h.verify(ctx, name, r)
	if d := r.Damage(); d != nil {
		return d
	}
	return nil
}

// verify is Verify of r, the repository name.
func (h *Host) verify(ctx context.Context, name string, r *Repository) {
	if _, err := r.verifyLogged(ctx, h.opts.Logger, RepairHosted(h.dir), "repo", name); err != nil && ctx.Err() == nil {
		h.opts.Logger.Error("cannot verify repository", "repo", name, "err", err)
	}
}

// verifyLogged runs an incremental Verify and logs a change of r's
// damage: new or different damage at ERROR with repair (what to do), a
// repair at INFO. It returns the damage (nil when none) and any error
// that kept Verify from answering.
func (r *Repository) verifyLogged(ctx context.Context, log *slog.Logger, repair string, attrs ...any) (*DamageError, error) {
	prev := r.Damage()
	err := r.Verify(ctx, VerifyOptions{})
	var d *DamageError
	switch {
	case errors.As(err, &d):
		if prev == nil || prev.Error() != d.Error() {
			d.LogTo(log, repair, attrs...)
		}
		return d, nil
	case err == nil && prev != nil:
		log.Info("repository is no longer damaged", attrs...)
	}
	return nil, err
}
