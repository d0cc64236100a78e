package gitsync

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// ErrStale is returned when a ref no longer has the value a writer
// expected: someone else moved it first (compare-and-swap failed).
var ErrStale = errors.New("ref changed concurrently")

// FileWrite is one file a commit writes or removes.
type FileWrite struct {
	// Path is slash-separated and relative to the repository root.
	Path string
	// Content is the new content; ignored when Delete is set.
	Content []byte
	// Delete removes the file (and directories left empty).
	Delete bool
	// Mode is the entry's git mode; zero keeps the mode of the file it
	// replaces when that is executable, and is a regular file otherwise.
	Mode filemode.FileMode
	// Object, when set, is an object already stored (or, for a gitlink,
	// the commit it names) that the entry points at as it is: Content is
	// not written. A merge carries a file over so, mode and all.
	Object plumbing.Hash
	// Match, when set, is the blob hash (see BlobHash) the file must
	// have in the parent commit for the write to go ahead; a pointer to
	// the zero hash means the file must not exist. A mismatch fails the
	// whole commit with a *ConflictError. This is the If-Match of the
	// daemon's file API, checked under the writer lock.
	Match *plumbing.Hash
}

// BlobHash is git's hash of content as a file (a blob): what
// Snapshot.Hash reports and FileWrite.Match expects. It serves as an
// ETag.
func BlobHash(content []byte) plumbing.Hash {
	return plumbing.ComputeHash(plumbing.BlobObject, content)
}

// ConflictError is a FileWrite whose Match did not hold.
type ConflictError struct {
	Path string
	// Want is the expected hash, Have the file's current one (zero:
	// the file does not exist).
	Want, Have plumbing.Hash
}

func (e *ConflictError) Error() string {
	if e.Have.IsZero() {
		return fmt.Sprintf("%s: file does not exist, expected %s", e.Path, e.Want)
	}
	return fmt.Sprintf("%s: file is at %s, expected %s", e.Path, e.Have, e.Want)
}

// Is makes a ConflictError match ErrStale.
func (e *ConflictError) Is(target error) bool { return target == ErrStale }

// PathConflictError is a write whose path runs through a file (a/b.md/c.md
// where a/b.md is a file) or that would replace a directory with a file.
// Nothing is written: a commit never deletes a file or a directory that
// its writes do not name.
type PathConflictError struct {
	Path string
	// Conflict is the existing file or directory in the way.
	Conflict string
	// IsDir says Conflict is a directory (else a file).
	IsDir bool
}

func (e *PathConflictError) Error() string {
	if e.IsDir {
		return fmt.Sprintf("%s: is a directory; write a file inside it instead", e.Path)
	}
	return fmt.Sprintf("%s: %s is a file, not a directory", e.Path, e.Conflict)
}

// CommitRequest is one commit the daemon makes on behalf of an agent.
type CommitRequest struct {
	// Ref is the branch to commit on, e.g. "refs/heads/main". A short
	// name ("main") means refs/heads/main.
	Ref string
	// Expect, when not zero, is the commit Ref must still point at: the
	// commit is refused with ErrStale otherwise. When zero, the commit goes
	// on top of whatever Ref points at (or starts the branch).
	Expect plumbing.Hash
	// Start, when Ref does not exist yet, is the revision the new branch
	// starts from (e.g. "main" for a proposal branch); empty starts an
	// orphan branch.
	Start string
	// Create requires Ref not to exist yet (ErrStale otherwise): a new
	// branch such as proposals/<agent>/<n> never lands on another's.
	Create bool
	// Writes are the file changes; only the trees on their paths are
	// rebuilt.
	Writes []FileWrite
	// Author is the agent (name and email); it is also the committer.
	Author object.Signature
	// User, when set, is recorded in a "Quire-User:" trailer.
	User string
	// Keys are the idempotency keys of the writes the commit carries,
	// recorded in WriteKeyTrailer trailers.
	Keys []WriteKey
	// Message is the commit message (its first line is the subject).
	Message string
}

// refName turns a short branch name into a full ref name.
func refName(s string) plumbing.ReferenceName {
	if strings.HasPrefix(s, "refs/") {
		return plumbing.ReferenceName(s)
	}
	return plumbing.NewBranchReferenceName(s)
}

// Commit writes a commit and moves req.Ref to it with compare-and-swap.
// Writers to one Repository are serialized; the new commit's parent is
// the ref's value read under that lock. It returns the new commit's hash.
//
// Only objects and the ref are written: in a repository with a work tree,
// the index and the checked-out files are not updated, so commit to a
// bare (hosted) repository or to a branch that is not checked out.
func (r *Repository) Commit(ctx context.Context, req CommitRequest) (plumbing.Hash, error) {
	ref := refName(req.Ref)
	if len(req.Writes) == 0 {
		return plumbing.ZeroHash, fmt.Errorf("commit on %s: no file changes", ref)
	}
	for _, w := range req.Writes {
		if err := checkWritePath(w.Path); err != nil {
			return plumbing.ZeroHash, fmt.Errorf("commit on %s: %w", ref, err)
		}
	}
	if req.Author.Name == "" {
		return plumbing.ZeroHash, fmt.Errorf("commit on %s: no author", ref)
	}
	// Waiting for the writer lock counts against ctx: a write that
	// cannot start in time is not made.
	if err := r.writeMu.LockContext(ctx); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("commit on %s: waiting for the writer lock: %w", ref, err)
	}
	defer r.writeMu.Unlock()
	var h plumbing.Hash
	err := r.withStore(func(st storer.EncodedObjectStorer) error {
		cur, err := r.refValue(ref)
		if err != nil {
			return err
		}
		if !req.Expect.IsZero() && cur != req.Expect {
			return fmt.Errorf("%w: %s is at %s, not %s", ErrStale, ref, cur, req.Expect)
		}
		if req.Create && !cur.IsZero() {
			return fmt.Errorf("%w: %s already exists (at %s)", ErrStale, ref, cur)
		}
		base := cur
		if base.IsZero() && req.Start != "" {
			p, err := r.repo.ResolveRevision(plumbing.Revision(req.Start))
			if err != nil {
				return fmt.Errorf("start revision %q: %w", req.Start, err)
			}
			base = *p
		}
		var p *pending
		h, p, err = buildCommit(st, &r.trees, base, req)
		if err != nil {
			return err
		}
		// The objects are durable before the ref names them.
		if err := r.st.writePending(p); err != nil {
			return err
		}
		return r.setRef(ref, cur, h)
	})
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("commit on %s in %s: %w", ref, r.path, err)
	}
	return h, nil
}

// buildCommit makes req's commit on parent base (zero: a root commit) in
// a pending store, without writing anything. The trees it reads come
// from trees when there, and the trees it makes go there once written
// (see pending.trees).
func buildCommit(st storer.EncodedObjectStorer, trees *treeCache, base plumbing.Hash, req CommitRequest) (plumbing.Hash, *pending, error) {
	var root plumbing.Hash
	var parents []plumbing.Hash
	if !base.IsZero() {
		c, err := object.GetCommit(st, base)
		if err != nil {
			return plumbing.ZeroHash, nil, err
		}
		root = c.TreeHash
		parents = []plumbing.Hash{base}
	}
	p := newPending(st)
	p.trees = trees
	newRoot, err := writeTree(p, root, req.Writes)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	sig := req.Author
	if sig.When.IsZero() {
		sig.When = time.Now()
	}
	c := &object.Commit{
		Author:       sig,
		Committer:    sig,
		Message:      commitMessage(req.Message, req.User, req.Keys),
		TreeHash:     newRoot,
		ParentHashes: parents,
	}
	o := p.NewEncodedObject()
	if err := c.Encode(o); err != nil {
		return plumbing.ZeroHash, nil, err
	}
	h, err := p.SetEncodedObject(o)
	return h, p, err
}

// commitMessage appends the Quire-User and WriteKeyTrailer trailers, to
// the message's own trailers when it ends with Quire's.
func commitMessage(msg, user string, keys []WriteKey) string {
	msg = strings.TrimRight(msg, "\n")
	if msg == "" {
		msg = "Update"
	}
	var trailers []string
	if user != "" {
		user = strings.Map(func(r rune) rune {
			if r == '\n' || r == '\r' {
				return ' '
			}
			return r
		}, user)
		trailers = append(trailers, "Quire-User: "+user)
	}
	for _, k := range keys {
		trailers = append(trailers, k.trailer())
	}
	if len(trailers) == 0 {
		return msg + "\n"
	}
	sep := "\n\n"
	if endsWithTrailers(msg) {
		sep = "\n"
	}
	return msg + sep + strings.Join(trailers, "\n") + "\n"
}

// endsWithTrailers reports whether msg's last paragraph, after its
// subject, is all Quire trailers (a batch's Quire-User lines).
func endsWithTrailers(msg string) bool {
	i := strings.LastIndex(msg, "\n\n")
	if i < 0 {
		return false
	}
	for _, line := range strings.Split(msg[i+2:], "\n") {
		if name, _, ok := strings.Cut(line, ": "); !ok || !strings.HasPrefix(name, "Quire-") || strings.ContainsAny(name, " \t") {
			return false
		}
	}
	return true
}

func checkWritePath(p string) error {
	if !fs.ValidPath(p) || p == "." {
		return fmt.Errorf("invalid path %q", p)
	}
	for _, part := range strings.Split(p, "/") {
		if strings.EqualFold(part, ".git") {
			return fmt.Errorf("invalid path %q: names .git", p)
		}
	}
	return nil
}

// refValue reads a ref's commit (zero when it does not exist; a
// *BrokenRefError when its file is damaged). Callers hold r.mu.
func (r *Repository) refValue(name plumbing.ReferenceName) (plumbing.Hash, error) {
	ref, err := r.st.refs.read(name)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read %s: %w", name, err)
	}
	if ref.Type() != plumbing.HashReference {
		return plumbing.ZeroHash, fmt.Errorf("read %s: a symbolic ref", name)
	}
	return ref.Hash(), nil
}

// setRef moves name from old to new (zero new deletes, zero old creates)
// if it still has the value old, under the ref's lock file: the check and
// the move are atomic against this process and any git. The new value is
// synced and renamed over the ref, so a crash leaves the old or the new
// value. Callers hold r.writeMu and r.mu.
func (r *Repository) setRef(name plumbing.ReferenceName, old, new plumbing.Hash) error {
	var ref *plumbing.Reference
	if !new.IsZero() {
		ref = plumbing.NewHashReference(name, new)
	}
	return r.st.refs.update(name, ref, &old)
}

// writeBlob stores content as a blob.
func writeBlob(st storer.EncodedObjectStorer, content []byte) (plumbing.Hash, error) {
	o := st.NewEncodedObject()
	o.SetType(plumbing.BlobObject)
	o.SetSize(int64(len(content)))
	wr, err := o.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := wr.Write(content); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := wr.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return st.SetEncodedObject(o)
}

// writeTree applies writes to the tree root (zero: the empty tree),
// rebuilding only the trees on the written paths, and returns the new
// root's hash.
func writeTree(st *pending, root plumbing.Hash, writes []FileWrite) (plumbing.Hash, error) {
	h, _, err := writeSubtree(st, root, writes, "")
	return h, err
}

// writeSubtree rewrites tree h with writes whose paths are relative to it
// (prefix is for error messages). It reports empty when nothing is left.
func writeSubtree(st *pending, h plumbing.Hash, writes []FileWrite, prefix string) (plumbing.Hash, bool, error) {
	entries, err := treeEntries(st, h, prefix)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	sub := map[string][]FileWrite{}
	var subOrder []string
	for _, w := range writes {
		first, rest, nested := strings.Cut(w.Path, "/")
		if nested {
			if _, ok := sub[first]; !ok {
				subOrder = append(subOrder, first)
			}
			inner := w
			inner.Path = rest
			sub[first] = append(sub[first], inner)
			continue
		}
		if entries, err = writeEntry(st, entries, w, prefix); err != nil {
			return plumbing.ZeroHash, false, err
		}
		if i := entryIndex(entries, w.Path); i >= 0 && !w.Delete {
			st.name(entries[i].Hash, prefix+w.Path)
		}
	}
	for _, name := range subOrder {
		if entries, err = writeSubtreeEntry(st, entries, name, sub[name], prefix); err != nil {
			return plumbing.ZeroHash, false, err
		}
	}
	if len(entries) == 0 {
		return plumbing.ZeroHash, true, nil
	}
	nh, err := storeTree(st, entries, prefix)
	if err == nil {
		st.name(nh, strings.TrimSuffix(prefix, "/"))
	}
	if err == nil && st.trees != nil { // a merge's trees go to no cache
		st.made = append(st.made, madeTree{h: nh, dir: treeDirPath(prefix), entries: entries})
	}
	return nh, false, err
}

// treeEntries is a copy of tree h's entries, none for the zero hash.
// A tree that st's tree cache holds whole is not decoded again: under
// appends, every commit rewrites the users/ tree the one before wrote.
func treeEntries(st *pending, h plumbing.Hash, prefix string) ([]object.TreeEntry, error) {
	if h.IsZero() {
		return nil, nil
	}
	if d, ok := st.trees.getAt(treeDirPath(prefix), h); ok && d.whole {
		return slices.Clone(d.entries), nil
	}
	t, err := object.GetTree(st, h)
	if err != nil {
		return nil, fmt.Errorf("read tree %s%s: %w", prefix, h, err)
	}
	return slices.Clone(t.Entries), nil
}

// treeDirPath is the directory of the tree writeSubtree writes at
// prefix ("" or "a/b/") as a Snapshot names it ("." or "a/b").
func treeDirPath(prefix string) string {
	if prefix == "" {
		return "."
	}
	return strings.TrimSuffix(prefix, "/")
}

// entryIndex is the index of the entry called name, -1 when there is none.
func entryIndex(entries []object.TreeEntry, name string) int {
	return slices.IndexFunc(entries, func(e object.TreeEntry) bool { return e.Name == name })
}

// writeEntry applies w, whose path names an entry of entries itself, and
// returns the entries after it.
func writeEntry(st storer.EncodedObjectStorer, entries []object.TreeEntry, w FileWrite, prefix string) ([]object.TreeEntry, error) {
	name := w.Path
	i := entryIndex(entries, name)
	if w.Match != nil {
		var have plumbing.Hash
		if i >= 0 && entries[i].Mode != filemode.Dir && entries[i].Mode != filemode.Submodule {
			have = entries[i].Hash
		}
		if have != *w.Match {
			return nil, &ConflictError{Path: prefix + name, Want: *w.Match, Have: have}
		}
	}
	if !w.Delete && i >= 0 && entries[i].Mode == filemode.Dir {
		return nil, &PathConflictError{Path: prefix + name, Conflict: prefix + name, IsDir: true}
	}
	if w.Delete {
		if i >= 0 && entries[i].Mode != filemode.Dir {
			entries = slices.Delete(entries, i, i+1)
		}
		return entries, nil
	}
	bh := w.Object
	if bh.IsZero() {
		var err error
		if bh, err = writeBlob(st, w.Content); err != nil {
			return nil, fmt.Errorf("write blob %s%s: %w", prefix, name, err)
		}
	}
	mode := w.Mode
	if mode == 0 {
		mode = filemode.Regular
		if i >= 0 && entries[i].Mode == filemode.Executable {
			mode = filemode.Executable
		}
	}
	e := object.TreeEntry{Name: name, Mode: mode, Hash: bh}
	if i >= 0 {
		entries[i] = e
	} else {
		entries = append(entries, e)
	}
	return entries, nil
}

// writeSubtreeEntry applies writes, whose paths are relative to the
// directory entry called name, and returns the entries after them.
func writeSubtreeEntry(st *pending, entries []object.TreeEntry, name string, writes []FileWrite, prefix string) ([]object.TreeEntry, error) {
	i := entryIndex(entries, name)
	var old plumbing.Hash
	if i >= 0 && entries[i].Mode == filemode.Dir {
		old = entries[i].Hash
	} else if i >= 0 {
		deletesOnly := true
		for _, w := range writes {
			deletesOnly = deletesOnly && w.Delete && w.Match == nil
		}
		if deletesOnly {
			return entries, nil // nothing under a file to delete
		}
		return nil, &PathConflictError{Path: prefix + name + "/" + writes[0].Path, Conflict: prefix + name}
	}
	nh, empty, err := writeSubtree(st, old, writes, prefix+name+"/")
	if err != nil {
		return nil, err
	}
	switch {
	case empty && i >= 0 && entries[i].Mode == filemode.Dir:
		entries = slices.Delete(entries, i, i+1)
	case empty:
	case i >= 0:
		entries[i] = object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: nh}
	default:
		entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: nh})
	}
	return entries, nil
}

// storeTree writes the tree of entries, sorted as git sorts them.
func storeTree(st storer.EncodedObjectStorer, entries []object.TreeEntry, prefix string) (plumbing.Hash, error) {
	sortGitOrder(entries)
	b, err := encodeTree(entries)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write tree %s: %w", prefix, err)
	}
	o := st.NewEncodedObject()
	o.SetType(plumbing.TreeObject)
	w, err := o.Writer()
	if err == nil {
		_, err = w.Write(b)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write tree %s: %w", prefix, err)
	}
	nh, err := st.SetEncodedObject(o)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write tree %s: %w", prefix, err)
	}
	return nh, nil
}

// encodeTree is git's encoding of entries, in git order: what
// object.Tree.Encode writes, without formatting each entry on its own
// (a tree of a thousand users' directories is rewritten by every commit
// to one of them).
func encodeTree(entries []object.TreeEntry) ([]byte, error) {
	n := 0
	for _, e := range entries {
		n += len(e.Name) + 8 + len(e.Hash)
	}
	b := make([]byte, 0, n)
	for _, e := range entries {
		if strings.IndexByte(e.Name, 0) >= 0 {
			return nil, fmt.Errorf("malformed filename %q", e.Name)
		}
		b = strconv.AppendUint(b, uint64(e.Mode), 8)
		b = append(b, ' ')
		b = append(b, e.Name...)
		b = append(b, 0)
		b = append(b, e.Hash[:]...)
	}
	return b, nil
}

// sortGitOrder sorts tree entries the way git does: a directory sorts as
// if its name ended in a slash. Entries mostly in order already (a tree
// read back with a few changed) are only checked.
func sortGitOrder(es []object.TreeEntry) {
	if !slices.IsSortedFunc(es, gitOrder) {
		slices.SortFunc(es, gitOrder)
	}
}

// gitOrder compares tree entries as git does, a directory's name as if
// it ended in a slash, without making that name.
func gitOrder(a, b object.TreeEntry) int {
	n := min(len(a.Name), len(b.Name))
	if c := strings.Compare(a.Name[:n], b.Name[:n]); c != 0 {
		return c
	}
	return cmp.Compare(nameByte(a, n), nameByte(b, n))
}

// nameByte is byte i of e's name as git orders it: '/' just past a
// directory's name, -1 past a file's.
func nameByte(e object.TreeEntry, i int) int {
	switch {
	case i < len(e.Name):
		return int(e.Name[i])
	case e.Mode == filemode.Dir:
		return '/'
	}
	return -1
}
