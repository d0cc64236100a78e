package gitsync

import (
	"bytes"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// MergeConflict is a file that both sides of a merge changed in a way
// that does not merge: the same lines differently, or one side deleted
// the file the other changed.
type MergeConflict struct {
	Path string
	// Lines are the conflicting regions (none when a side deleted the
	// file or it is not text).
	Lines []TextConflict
	// Why says what happened, for the pusher.
	Why string
}

// MergePolicy picks how a merge merges a file that both of its sides
// changed: a function that combines the three versions without conflict
// (a daily log: the union of its entries), or nil for Merge3, the line by
// line merge, which may conflict. ours and theirs read the trees of the
// two sides (ours is the branch merged into), for a policy that looks at
// the files around path (an agent's agent.yaml). A daemon's write of a
// file the policy combines may also be merged onto a live that moved
// since it was made, instead of being refused as stale (the write is
// re-applied as a merge would). The nil policy merges every file line by
// line; gitsync knows commits and trees, the policy what the files are.
type MergePolicy func(path string, ours, theirs fs.FS) func(base, ours, theirs []byte) []byte

// combine is policy's merge of path, nil when there is no policy.
func (policy MergePolicy) combine(path string, ours, theirs fs.FS) func(base, ours, theirs []byte) []byte {
	if policy == nil {
		return nil
	}
	return policy(path, ours, theirs)
}

// mergeResult is a merge of two commits computed in memory.
type mergeResult struct {
	// Tree is the merged root tree; its new objects are in the pending
	// store the merge wrote to.
	Tree plumbing.Hash
	// Conflicts, when not empty, refuse the merge.
	Conflicts []MergeConflict
}

// mergeTrees merges the trees of commits ours and theirs, whose merge
// base is base (zero: none, every file of theirs is new), starting from
// ours: a file only theirs changed takes theirs' version; one both
// changed merges as policy says (line by line unless it combines the
// file). New objects go to p.
func mergeTrees(ctx context.Context, p *pending, policy MergePolicy, base, ours, theirs plumbing.Hash) (mergeResult, error) {
	oursCommit, err := object.GetCommit(p, ours)
	if err != nil {
		return mergeResult{}, fmt.Errorf("read %s: %w", ours, err)
	}
	theirChanges, err := changes(ctx, p, base, theirs)
	if err != nil {
		return mergeResult{}, err
	}
	ourChanges, err := changes(ctx, p, base, ours)
	if err != nil {
		return mergeResult{}, err
	}
	ourChanged := map[string]Change{}
	for _, c := range ourChanges {
		ourChanged[c.Path] = c
	}
	sides, err := openMergeSides(p, policy, base, ours, theirs)
	if err != nil {
		return mergeResult{}, err
	}
	var res mergeResult
	var writes []FileWrite
	for _, c := range theirChanges {
		if err := ctx.Err(); err != nil {
			return mergeResult{}, err
		}
		oc, both := ourChanged[c.Path]
		if !both {
			writes = append(writes, theirsAsIs(c))
			continue
		}
		w, conflict := sides.mergeChange(c, oc)
		if conflict != nil {
			res.Conflicts = append(res.Conflicts, *conflict)
		} else if w != nil {
			writes = append(writes, *w)
		}
	}
	if len(res.Conflicts) > 0 {
		return res, nil
	}
	return applyMerge(p, oursCommit.TreeHash, writes)
}

// theirsAsIs is the write taking theirs' side of a file only they changed.
func theirsAsIs(c Change) FileWrite {
	if c.Kind == Deleted {
		return FileWrite{Path: c.Path, Delete: true}
	}
	// Theirs as it is: the same object and mode (a link stays a link, a
	// gitlink a gitlink, for the validator to see).
	return FileWrite{Path: c.Path, Object: c.Hash, Mode: c.Mode}
}

// mergeSides are the three trees of a merge and the policy merging the
// files both sides changed.
type mergeSides struct {
	policy MergePolicy
	// base is nil when the sides share no history.
	base, ours, theirs *Snapshot
}

// openMergeSides reads the trees of commits base (zero: none), ours and
// theirs.
func openMergeSides(p *pending, policy MergePolicy, base, ours, theirs plumbing.Hash) (*mergeSides, error) {
	bs, err := snapshotOrEmpty(p, base)
	if err != nil {
		return nil, err
	}
	osnap, err := newSnapshot(p, ours)
	if err != nil {
		return nil, err
	}
	ts, err := newSnapshot(p, theirs)
	if err != nil {
		return nil, err
	}
	return &mergeSides{policy: policy, base: bs, ours: osnap, theirs: ts}, nil
}

// mergeChange merges a path both sides changed, theirs as c and ours as
// oc: the write to make, a conflict refusing the merge, or neither when
// ours already holds the result.
func (m *mergeSides) mergeChange(c, oc Change) (*FileWrite, *MergeConflict) {
	if !isFile(c) || !isFile(oc) {
		if c.Kind == oc.Kind && c.Mode == oc.Mode && c.Hash == oc.Hash {
			return nil, nil // the same change on both sides
		}
		return nil, &MergeConflict{Path: c.Path, Why: "a link or submodule changed by you and by an agent since your base"}
	}
	tb, terr := m.theirs.ReadFile(c.Path)
	ob, oerr := m.ours.ReadFile(c.Path)
	switch {
	case terr != nil && oerr != nil:
		return nil, nil // both deleted it
	case terr != nil:
		return nil, &MergeConflict{Path: c.Path, Why: "you deleted it and an agent changed it since your base"}
	case oerr != nil:
		return nil, &MergeConflict{Path: c.Path, Why: "you changed it and an agent deleted it since your base"}
	case bytes.Equal(tb, ob):
		return nil, nil
	}
	var bb []byte
	if m.base != nil {
		bb, _ = m.base.ReadFile(c.Path) // absent in base: merge against empty
	}
	if !utf8.Valid(tb) || !utf8.Valid(ob) || !utf8.Valid(bb) || bytes.IndexByte(tb, 0) >= 0 || bytes.IndexByte(ob, 0) >= 0 {
		return nil, &MergeConflict{Path: c.Path, Why: "a binary file changed by you and by an agent since your base"}
	}
	mode := mergedMode(m.base, c, oc)
	if combine := m.policy.combine(c.Path, m.ours, m.theirs); combine != nil {
		return &FileWrite{Path: c.Path, Content: combine(bb, ob, tb), Mode: mode}, nil
	}
	merged, conflicts := Merge3(bb, ob, tb)
	if len(conflicts) > 0 {
		return nil, &MergeConflict{Path: c.Path, Lines: conflicts, Why: "the agent changed these lines since your base"}
	}
	return &FileWrite{Path: c.Path, Content: merged, Mode: mode}, nil
}

// applyMerge writes the merge's writes over our tree root, a conflict
// when one makes a file and a directory of the same name.
func applyMerge(p *pending, root plumbing.Hash, writes []FileWrite) (mergeResult, error) {
	var res mergeResult
	if len(writes) > 0 {
		var err error
		root, err = writeTree(p, root, writes)
		var pc *PathConflictError
		if errors.As(err, &pc) {
			res.Conflicts = append(res.Conflicts, MergeConflict{Path: pc.Path, Why: "a file and a directory of that name since your base: " + pc.Error()})
			return res, nil
		}
		if err != nil {
			return mergeResult{}, err
		}
	}
	res.Tree = root
	return res, nil
}

// isFile reports whether a change leaves a regular or executable file, or
// deletes one: what merges by content.
func isFile(c Change) bool {
	return c.Mode == filemode.Regular || c.Mode == filemode.Executable || c.Mode == filemode.Deprecated
}

// mergedMode is the mode of a file both sides changed: theirs when only
// they changed it from the base's, ours otherwise.
func mergedMode(base *Snapshot, theirs, ours Change) filemode.FileMode {
	if theirs.Mode == ours.Mode || theirs.Kind == Deleted || ours.Kind == Deleted {
		return ours.Mode
	}
	var baseMode filemode.FileMode
	if base != nil {
		if e, err := base.entry(theirs.Path); err == nil {
			baseMode = e.Mode
		}
	}
	if ours.Mode == baseMode {
		return theirs.Mode
	}
	return ours.Mode
}

func snapshotOrEmpty(st storer.EncodedObjectStorer, h plumbing.Hash) (*Snapshot, error) {
	if h.IsZero() {
		return nil, nil
	}
	return newSnapshot(st, h)
}

// mergeBase returns the best common ancestor of a and b (zero when they
// share no history): of the common ancestors that are not ancestors of
// another one, the newest by committer date.
func mergeBase(st storer.EncodedObjectStorer, a, b plumbing.Hash) (plumbing.Hash, error) {
	if a == b {
		return a, nil
	}
	bases, err := commonAncestors(st, a, b)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("merge base of %s and %s: %w", a, b, err)
	}
	if len(bases) == 0 {
		return plumbing.ZeroHash, nil
	}
	slices.SortFunc(bases, func(x, y *object.Commit) int { return y.Committer.When.Compare(x.Committer.When) })
	return bases[0].Hash, nil
}

// commonAncestors paints down from a and b, newest first, as git's
// merge-base does: a commit both reach is a common ancestor, and what lies
// below it is marked stale rather than walked for its own sake. The walk
// ends once every commit still queued is stale, so its cost is the
// history since the two sides parted, not the whole history (go-git's
// Commit.MergeBase lists every ancestor of one side first). A common
// ancestor that another one reaches is left out.
func commonAncestors(st storer.EncodedObjectStorer, a, b plumbing.Hash) ([]*object.Commit, error) {
	const fromA, fromB, stale = 1, 2, 4
	paint := map[plumbing.Hash]uint8{}
	q := &commitQueue{}
	push := func(h plumbing.Hash, p uint8) error {
		if paint[h]&p == p {
			return nil
		}
		c, err := object.GetCommit(st, h)
		if err != nil {
			return fmt.Errorf("read %s: %w", h, err)
		}
		paint[h] |= p
		heap.Push(q, c)
		return nil
	}
	if err := push(a, fromA); err != nil {
		return nil, err
	}
	if err := push(b, fromB); err != nil {
		return nil, err
	}
	var found []*object.Commit
	for q.Len() > 0 && !q.all(paint, stale) {
		c := heap.Pop(q).(*object.Commit)
		p := paint[c.Hash]
		if p&(fromA|fromB) == fromA|fromB {
			if p&stale == 0 {
				found = append(found, c)
			}
			p |= stale
		}
		for _, ph := range c.ParentHashes {
			if err := push(ph, p); err != nil {
				return nil, err
			}
		}
	}
	var out []*object.Commit
	for _, c := range found {
		if paint[c.Hash]&stale == 0 {
			out = append(out, c)
		}
	}
	return independent(st, out)
}

// independent drops each commit of cs that is an ancestor of another:
// the walk leaves one behind only when commit dates lie, so this is
// rarely more than one question.
func independent(st storer.EncodedObjectStorer, cs []*object.Commit) ([]*object.Commit, error) {
	if len(cs) < 2 {
		return cs, nil
	}
	var out []*object.Commit
	for i, c := range cs {
		below := false
		for j, d := range cs {
			if i == j || c.Hash == d.Hash {
				continue
			}
			in, err := isAncestor(st, c.Hash, d.Hash)
			if err != nil {
				return nil, err
			}
			if in {
				below = true
				break
			}
		}
		if !below {
			out = append(out, c)
		}
	}
	return out, nil
}

// isAncestor reports whether a is b or an ancestor of b.
func isAncestor(st storer.EncodedObjectStorer, a, b plumbing.Hash) (bool, error) {
	if a == b {
		return true, nil
	}
	// Paint down from both, newest first, as git's merge-base does: a is
	// an ancestor of b once b's paint reaches it; it is not once every
	// commit still to visit is reachable from both (below them lie only
	// common ancestors). So "no" costs the walk to where the two
	// histories meet, not to the root: a push of main not yet in live,
	// or a daemon's write on an older live, are answered in a few steps.
	// A commit whose paint grows is visited again, so the answer does
	// not depend on the commit dates, only the cost does.
	const fromA, fromB = 1, 2
	paint := map[plumbing.Hash]uint8{}
	commits := map[plumbing.Hash]*object.Commit{}
	q := &commitQueue{}
	push := func(h plumbing.Hash, p uint8) error {
		if paint[h]&p == p {
			return nil
		}
		paint[h] |= p
		c, ok := commits[h]
		if !ok {
			var err error
			if c, err = object.GetCommit(st, h); err != nil {
				return fmt.Errorf("read %s: %w", h, err)
			}
			commits[h] = c
		}
		heap.Push(q, c)
		return nil
	}
	if err := push(a, fromA); err != nil {
		return false, err
	}
	if err := push(b, fromB); err != nil {
		return false, err
	}
	for q.Len() > 0 {
		if paint[a]&fromB != 0 {
			return true, nil
		}
		if q.allStale(paint) {
			return false, nil
		}
		c := heap.Pop(q).(*object.Commit)
		p := paint[c.Hash]
		for _, ph := range c.ParentHashes {
			if err := push(ph, p); err != nil {
				return false, err
			}
		}
	}
	return paint[a]&fromB != 0, nil
}

// commitQueue is a max-heap of commits by committer date.
type commitQueue []*object.Commit

func (q commitQueue) Len() int { return len(q) }
func (q commitQueue) Less(i, j int) bool {
	return q[i].Committer.When.After(q[j].Committer.When)
}
func (q commitQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *commitQueue) Push(x any)   { *q = append(*q, x.(*object.Commit)) }
func (q *commitQueue) Pop() any {
	old := *q
	c := old[len(old)-1]
	*q = old[:len(old)-1]
	return c
}

// allStale reports whether every queued commit is painted from both
// sides.
func (q commitQueue) allStale(paint map[plumbing.Hash]uint8) bool {
	return q.all(paint, 3)
}

// all reports whether every queued commit's paint has all of bits.
func (q commitQueue) all(paint map[plumbing.Hash]uint8, bits uint8) bool {
	for _, c := range q {
		if paint[c.Hash]&bits != bits {
			return false
		}
	}
	return true
}

// mergeCommit writes the commit that merges theirs into ours with tree
// root: first parent ours, second theirs.
func mergeCommit(p *pending, root, ours, theirs plumbing.Hash, theirName, ourName string) (plumbing.Hash, error) {
	sig := object.Signature{Name: "quire", Email: "quire@quire.invalid", When: time.Now()}
	c := &object.Commit{
		Author:       sig,
		Committer:    sig,
		Message:      fmt.Sprintf("Merge %s into %s\n", path.Base(theirName), path.Base(ourName)),
		TreeHash:     root,
		ParentHashes: []plumbing.Hash{ours, theirs},
	}
	o := p.NewEncodedObject()
	if err := c.Encode(o); err != nil {
		return plumbing.ZeroHash, err
	}
	return p.SetEncodedObject(o)
}
