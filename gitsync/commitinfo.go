package gitsync

import (
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// CommitInfo is what a history shows of a commit: its parents, author
// and message.
type CommitInfo struct {
	Hash      plumbing.Hash
	Parents   []plumbing.Hash
	Author    object.Signature
	Committer object.Signature
	Message   string
}

// CommitInfo reads commit h.
func (r *Repository) CommitInfo(h plumbing.Hash) (CommitInfo, error) {
	var out CommitInfo
	err := r.withStore(func(st storer.EncodedObjectStorer) error {
		c, err := object.GetCommit(st, h)
		if err != nil {
			return err
		}
		out = CommitInfo{Hash: c.Hash, Parents: c.ParentHashes, Author: c.Author, Committer: c.Committer, Message: c.Message}
		return nil
	})
	if err != nil {
		return CommitInfo{}, fmt.Errorf("read commit %s in %s: %w", h, r.path, err)
	}
	return out, nil
}

// Tag creates the annotated tag name (a full ref name, refs/tags/…)
// pointing at commit target, by tagger with message. It fails with
// ErrStale when the tag exists.
func (r *Repository) Tag(name plumbing.ReferenceName, target plumbing.Hash, tagger object.Signature, message string) (plumbing.Hash, error) {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	var h plumbing.Hash
	err := r.withStore(func(st storer.EncodedObjectStorer) error {
		tag := &object.Tag{Name: name.Short(), Tagger: tagger, Message: message, TargetType: plumbing.CommitObject, Target: target}
		o := st.NewEncodedObject()
		if err := tag.Encode(o); err != nil {
			return err
		}
		var err error
		if h, err = st.SetEncodedObject(o); err != nil {
			return err
		}
		return r.setRef(name, plumbing.ZeroHash, h)
	})
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("tag %s in %s: %w", name, r.path, err)
	}
	return h, nil
}
