package gitsync

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// livePlan is what an accepted push to main does to live.
type livePlan struct {
	old, new plumbing.Hash // live before and after (equal: unchanged)
	p        *pending      // the merge's new objects (nil: none)
	// rebased: the plan is for a push to live itself, merged onto a live
	// that moved (see rebaseLive): live moves from old to new, not to the
	// pushed commit.
	rebased bool
}

// staleLive refuses a push to live that is not a fast-forward.
const staleLive = "non-fast-forward: live only moves forward (it holds the agents' writes); fetch live, build on it, push again"

// livePolicy refuses what the two-branch rule forbids, before anything is
// validated: deleting main or live, and moving either to a commit that
// does not descend from it (main may when AllowNonFastForward is set; a
// daemon's write pushed on a live that moved is decided under the writer
// lock, see rebaseLive). "" lets the command go on; ff reports whether
// the command is a fast-forward.
func (h *Host) livePolicy(ov *overlay, c command) (reason string, ff bool) {
	if c.Name != MainRef && c.Name != LiveRef {
		return "", true
	}
	if c.isDelete() {
		return fmt.Sprintf("deleting %s is not allowed: the daemon deploys live and merges main into it", c.Name.Short()), false
	}
	if c.Old.IsZero() {
		return "", true
	}
	if c.Name == LiveRef {
		if parent, ok := daemonWrite(ov, c.New); ok && parent == c.Old {
			return "", true // a daemon's write on the live it saw
		}
	}
	ff, err := isAncestor(ov, c.Old, c.New)
	if err != nil {
		h.opts.Logger.Error("push: is the old value an ancestor", "ref", c.Name, "err", err)
		return "missing necessary objects", false
	}
	if ff || (c.Name == MainRef && h.opts.AllowNonFastForward) {
		return "", ff
	}
	if c.Name == LiveRef {
		if _, ok := daemonWrite(ov, c.New); ok {
			return "", false
		}
		return staleLive, false
	}
	return "non-fast-forward: main only moves forward on this server; git pull --no-rebase, then push again without --force", false
}

// daemonWrite reports whether h is a daemon's write: one commit, with one
// parent (returned), authored by an agent.
func daemonWrite(st storer.EncodedObjectStorer, h plumbing.Hash) (plumbing.Hash, bool) {
	c, err := object.GetCommit(st, h)
	if err != nil || len(c.ParentHashes) != 1 || !byQuire(c) {
		return plumbing.ZeroHash, false
	}
	return c.ParentHashes[0], true
}

// checkMain validates a push to main on what it would deploy: its merge
// with live.
func (h *Host) checkMain(ctx context.Context, r *Repository, ov *overlay, c command, out *pushOutput) (*livePlan, string) {
	obj, err := ov.EncodedObject(plumbing.AnyObject, c.New)
	if err != nil {
		return nil, "missing necessary objects"
	}
	if obj.Type() != plumbing.CommitObject {
		return nil, "not a commit"
	}
	// What the person pushed, before the merge (which carries files
	// over by content): names, links and gitlinks.
	if pushed, err := changes(ctx, ov, commitOrZero(ov, c.Old), c.New); err == nil {
		if reason := reportProblems(c, entryProblems(pushed), out); reason != "" {
			return nil, reason
		}
	}
	plan, tree, changed, reason := h.planLive(ctx, r, ov, c, out.url, out)
	if reason != "" {
		return nil, reason
	}
	problems := h.opts.Validator.Validate(ctx, RefUpdate{Repo: out.repo, Name: c.Name, Old: c.Old, New: c.New}, tree, changed)
	problems = append(problems, historyProblems(ctx, ov, c.New)...)
	return plan, reportProblems(c, problems, out)
}

// planLive merges a pushed main (c.New) into the current live, in memory,
// and returns what live becomes, the merged snapshot to validate and the
// paths that differ from live. A conflict is reported on out and as the
// refusal reason.
func (h *Host) planLive(ctx context.Context, r *Repository, ov *overlay, c command, url string, out *pushOutput) (*livePlan, *Snapshot, []Change, string) {
	var live plumbing.Hash
	err := r.locked(func(storer.EncodedObjectStorer) error {
		var err error
		live, err = r.refValue(LiveRef)
		return err
	})
	if err != nil && !errors.Is(err, ErrBrokenRef) {
		h.opts.Logger.Error("read live", "repo", r.path, "err", err)
		return nil, nil, nil, "cannot read live"
	}
	if live.IsZero() {
		// No live yet (a new repository): live starts at main.
		tree, err := ov.snapshot(c.New)
		if err != nil {
			return nil, nil, nil, "bad commit"
		}
		changed, err := changes(ctx, ov, plumbing.ZeroHash, c.New)
		if err != nil {
			return nil, nil, nil, "cannot compare trees"
		}
		return &livePlan{new: c.New}, tree, changed, ""
	}
	if in, err := isAncestor(ov, c.New, live); err != nil {
		h.opts.Logger.Error("push: is main in live", "repo", r.path, "err", err)
		return nil, nil, nil, "missing necessary objects"
	} else if in {
		// live holds this main already (a person pushed what they
		// pulled from live): live does not move.
		tree, err := ov.snapshot(c.New)
		if err != nil {
			return nil, nil, nil, "bad commit"
		}
		return &livePlan{old: live, new: live}, tree, nil, ""
	}
	return h.mergeIntoLive(ctx, r, ov, c, live, url, out)
}

// mergeIntoLive is planLive for a live that does not hold the pushed
// main yet: the merge commit (first parent live, second main) is built
// in memory.
func (h *Host) mergeIntoLive(ctx context.Context, r *Repository, ov *overlay, c command, live plumbing.Hash, url string, out *pushOutput) (*livePlan, *Snapshot, []Change, string) {
	base, err := mergeBase(ov, live, c.New)
	if err != nil {
		h.opts.Logger.Error("merge base", "repo", r.path, "err", err)
		return nil, nil, nil, "cannot find the merge base with live"
	}
	p := newPending(ov)
	res, err := mergeTrees(ctx, p, h.opts.Merge, base, live, c.New)
	if err != nil {
		h.opts.Logger.Error("merge main into live", "repo", r.path, "err", err)
		return nil, nil, nil, "cannot merge with live"
	}
	if len(res.Conflicts) > 0 {
		return nil, nil, nil, conflictReason(res.Conflicts, url, out)
	}
	m, err := mergeCommit(p, res.Tree, live, c.New, MainRef.Short(), LiveRef.Short())
	if err != nil {
		return nil, nil, nil, "cannot write the merge"
	}
	tree, err := newSnapshot(p, m)
	if err != nil {
		return nil, nil, nil, "cannot read the merge"
	}
	changed, err := changes(ctx, p, live, m)
	if err != nil {
		return nil, nil, nil, "cannot compare trees"
	}
	return &livePlan{old: live, new: m, p: p}, tree, changed, ""
}

// conflictReason writes one remote: line per conflicting region and
// returns the one-line refusal git shows in parentheses.
func conflictReason(cs []MergeConflict, url string, out *pushOutput) string {
	out.say("error: main cannot be merged into live (what is deployed):")
	for _, c := range cs {
		if len(c.Lines) == 0 {
			out.say("error:   %s: %s", c.Path, c.Why)
			continue
		}
		for _, l := range c.Lines {
			out.say("error:   %s: your %s, live's %s: %s", c.Path, lineRange(l.Theirs), lineRange(l.Ours), c.Why)
		}
	}
	if url == "" {
		url = "<this remote>"
	}
	out.say("error: to resolve: git pull --no-rebase %s live, fix the conflicts, git commit -a --no-edit, push again", url)
	var paths []string
	for _, c := range cs {
		paths = append(paths, c.Path)
	}
	first := cs[0]
	why := first.Why
	if len(cs) > 1 {
		why += fmt.Sprintf(" (and %d more: %s)", len(cs)-1, strings.Join(paths[1:], ", "))
	}
	return fmt.Sprintf("%s: %s; git pull --no-rebase %s live, resolve, commit, push again", first.Path, why, url)
}

func lineRange(l LineRange) string {
	switch {
	case l.End < l.Start:
		return fmt.Sprintf("lines (none, before line %d)", l.Start)
	case l.End == l.Start:
		return fmt.Sprintf("line %d", l.Start)
	}
	return fmt.Sprintf("lines %d-%d", l.Start, l.End)
}

// rebaseLive answers a push to live that a daemon made on a live that
// moved since it fetched (the write's parent is behind cur): pushed with
// compare-and-swap and overtaken between the ref advertisement and the
// ref update. Instead of
// refusing it — the daemon would fetch, re-apply its write and push
// again, a round trip that loses to every faster writer — live becomes
// the merge of the pushed write into cur, when that is what re-applying
// it would give: the push is one commit authored by an agent (a daemon's
// write) whose parent is in live, and every file it changes is either
// unchanged on live since that parent (so an If-Match the daemon checked
// still holds) or one the merge policy combines (a daily log, whose
// entries merge as a union, as an append re-applied would). Anything
// else stays "non-fast-forward". The merged tree is validated like any
// push. Callers hold r.writeMu.
func (h *Host) rebaseLive(ctx context.Context, r *Repository, ov *overlay, c command, cur plumbing.Hash, out *pushOutput) (*livePlan, string) {
	if cur.IsZero() || c.isDelete() {
		return nil, staleLive
	}
	base, ok := daemonWrite(ov, c.New)
	if !ok {
		return nil, staleLive
	}
	if base == cur {
		// Written on live as it is: a fast-forward.
		return &livePlan{old: cur, new: c.New, rebased: true}, ""
	}
	if ok, err := isAncestor(ov, base, cur); err != nil || !ok {
		return nil, staleLive
	}
	// A retry of the write (its idempotency key) that another daemon
	// pushed first: applying this one too would write it twice.
	if reason := duplicateWrite(ov, c.New, base, cur); reason != "" {
		out.say("error: %s", reason)
		return nil, reason
	}
	ours, err := changes(ctx, ov, base, c.New)
	if err != nil {
		return nil, staleLive
	}
	theirs, err := changes(ctx, ov, base, cur)
	if err != nil {
		return nil, staleLive
	}
	moved := make(map[string]bool, len(theirs))
	for _, ch := range theirs {
		moved[ch.Path] = true
	}
	if !h.combines(ov, ours, moved, cur, c.New) {
		return nil, staleLive
	}
	return h.mergeWrite(ctx, ov, c, base, cur, out)
}

// mergeWrite merges a daemon's write (c.New, written on base) onto cur
// and validates the merged tree: rebaseLive once it found the write
// combines with what live took since base.
func (h *Host) mergeWrite(ctx context.Context, ov *overlay, c command, base, cur plumbing.Hash, out *pushOutput) (*livePlan, string) {
	p := newPending(ov)
	res, err := mergeTrees(ctx, p, h.opts.Merge, base, cur, c.New)
	if err != nil || len(res.Conflicts) > 0 {
		return nil, staleLive
	}
	m, err := mergeCommit(p, res.Tree, cur, c.New, "write "+c.New.String()[:12], LiveRef.Short())
	if err != nil {
		return nil, staleLive
	}
	tree, err := newSnapshot(p, m)
	if err != nil {
		return nil, "cannot read the merge"
	}
	changed, err := changes(ctx, p, cur, m)
	if err != nil {
		return nil, "cannot compare trees"
	}
	problems := h.opts.Validator.Validate(ctx, RefUpdate{Repo: out.repo, Name: c.Name, Old: cur, New: m}, tree, changed)
	if reason := reportProblems(c, problems, out); reason != "" {
		return nil, reason
	}
	return &livePlan{old: cur, new: m, p: p, rebased: true}, ""
}

// combines reports whether every file of a daemon's write (changes) that
// live changed too since the write's parent (moved) is one the merge
// policy combines, as a write re-applied on cur would be: a deleted or
// other file would overwrite what the write did not see.
func (h *Host) combines(ov *overlay, changes []Change, moved map[string]bool, cur, write plumbing.Hash) bool {
	var ours, theirs fs.FS
	for _, ch := range changes {
		if !moved[ch.Path] {
			continue
		}
		if ch.Kind == Deleted {
			return false
		}
		if ours == nil {
			o, err := ov.snapshot(cur)
			if err != nil {
				return false
			}
			t, err := ov.snapshot(write)
			if err != nil {
				return false
			}
			ours, theirs = o, t
		}
		if h.opts.Merge.combine(ch.Path, ours, theirs) == nil {
			return false
		}
	}
	return true
}
