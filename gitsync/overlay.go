package gitsync

import (
	"errors"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// overlay reads a push's quarantined objects first and the repository's
// for everything else, so the pushed trees can be read and checked
// before anything joins the repository. It is read-only.
type overlay struct {
	repo *Repository
	q    *quarantine // nil: a push with no pack (deletions only)
}

func newOverlay(r *Repository, q *quarantine) *overlay {
	return &overlay{repo: r, q: q}
}

// pushed reports whether h came with the push.
func (o *overlay) pushed(h plumbing.Hash) bool { return o.q.has(h) }

func (o *overlay) NewEncodedObject() plumbing.EncodedObject { return &plumbing.MemoryObject{} }

func (o *overlay) SetEncodedObject(plumbing.EncodedObject) (plumbing.Hash, error) {
	return plumbing.ZeroHash, errors.New("overlay: read-only")
}

func (o *overlay) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	if o.q != nil {
		obj, err := o.q.st.EncodedObject(t, h)
		if err == nil {
			return obj, nil
		}
		if !errors.Is(err, plumbing.ErrObjectNotFound) {
			return nil, err
		}
	}
	var obj plumbing.EncodedObject
	// withStore re-reads the pack directory when a repack removed the
	// pack the object was in.
	err := o.repo.withStore(func(st storer.EncodedObjectStorer) error {
		var err error
		obj, err = st.EncodedObject(t, h)
		if err != nil {
			return err
		}
		// Read it now, under the storage lock: go-git's objects read
		// lazily from pack files.
		return copyObject(&obj)
	})
	return obj, err
}

// copyObject replaces *obj with an in-memory copy.
func copyObject(obj *plumbing.EncodedObject) error {
	src := *obj
	if _, ok := src.(*plumbing.MemoryObject); ok {
		return nil
	}
	mo := &plumbing.MemoryObject{}
	mo.SetType(src.Type())
	mo.SetSize(src.Size())
	r, err := src.Reader()
	if err != nil {
		return err
	}
	defer r.Close()
	w, _ := mo.Writer()
	if _, err := io.Copy(w, r); err != nil {
		return err
	}
	*obj = mo
	return nil
}

func (o *overlay) IterEncodedObjects(t plumbing.ObjectType) (storer.EncodedObjectIter, error) {
	return nil, errors.New("overlay: objects cannot be iterated")
}

func (o *overlay) HasEncodedObject(h plumbing.Hash) error {
	if o.pushed(h) {
		return nil
	}
	return o.repo.locked(func(st storer.EncodedObjectStorer) error { return st.HasEncodedObject(h) })
}

func (o *overlay) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	if o.q != nil {
		if n, err := o.q.st.EncodedObjectSize(h); err == nil {
			return n, nil
		}
	}
	var n int64
	err := o.repo.locked(func(st storer.EncodedObjectStorer) error {
		var err error
		n, err = st.EncodedObjectSize(h)
		return err
	})
	return n, err
}

func (o *overlay) AddAlternate(string) error { return errors.New("overlay: alternates not supported") }

// snapshot returns commit h's tree as seen through the overlay.
func (o *overlay) snapshot(h plumbing.Hash) (*Snapshot, error) {
	return newSnapshot(o, h)
}
