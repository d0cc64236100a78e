package gitsync

import (
	"errors"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// overlay holds the objects of a pushed pack in memory and reads through
// to the repository for everything else, so a thin pack's deltas resolve
// and the pushed trees can be read before anything is written to disk.
type overlay struct {
	repo    *Repository
	objects map[plumbing.Hash]*plumbing.MemoryObject
	order   []plumbing.Hash
	bytes   int64
	limit   int64 // bound on inflated bytes; 0 is no bound
}

var errTooLarge = errors.New("push too large")

func newOverlay(r *Repository, limit int64) *overlay {
	return &overlay{repo: r, objects: map[plumbing.Hash]*plumbing.MemoryObject{}, limit: limit}
}

// readPack parses a pack stream into the overlay.
func (o *overlay) readPack(r io.Reader) error {
	sc := packfile.NewScanner(r)
	p, err := packfile.NewParserWithStorage(sc, o)
	if err != nil {
		return err
	}
	if _, err := p.Parse(); err != nil {
		return err
	}
	return nil
}

func (o *overlay) NewEncodedObject() plumbing.EncodedObject { return &plumbing.MemoryObject{} }

func (o *overlay) SetEncodedObject(obj plumbing.EncodedObject) (plumbing.Hash, error) {
	h := obj.Hash()
	if _, ok := o.objects[h]; ok {
		return h, nil
	}
	mo, ok := obj.(*plumbing.MemoryObject)
	if !ok {
		mo = &plumbing.MemoryObject{}
		mo.SetType(obj.Type())
		mo.SetSize(obj.Size())
		r, err := obj.Reader()
		if err != nil {
			return h, err
		}
		defer r.Close()
		w, _ := mo.Writer()
		if _, err := io.Copy(w, r); err != nil {
			return h, err
		}
	}
	o.bytes += mo.Size()
	if o.limit > 0 && o.bytes > o.limit {
		return h, fmt.Errorf("%w: more than %d bytes of objects", errTooLarge, o.limit)
	}
	o.objects[h] = mo
	o.order = append(o.order, h)
	return h, nil
}

func (o *overlay) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	if obj, ok := o.objects[h]; ok {
		if t != plumbing.AnyObject && obj.Type() != t {
			return nil, plumbing.ErrObjectNotFound
		}
		return obj, nil
	}
	var obj plumbing.EncodedObject
	err := o.repo.locked(func(st storer.EncodedObjectStorer) error {
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
	var objs []plumbing.EncodedObject
	for _, h := range o.order {
		if obj := o.objects[h]; t == plumbing.AnyObject || obj.Type() == t {
			objs = append(objs, obj)
		}
	}
	return storer.NewEncodedObjectSliceIter(objs), nil
}

func (o *overlay) HasEncodedObject(h plumbing.Hash) error {
	if _, ok := o.objects[h]; ok {
		return nil
	}
	return o.repo.locked(func(st storer.EncodedObjectStorer) error { return st.HasEncodedObject(h) })
}

func (o *overlay) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	if obj, ok := o.objects[h]; ok {
		return obj.Size(), nil
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
	s, err := newSnapshot(o, h)
	if err != nil {
		return nil, err
	}
	return s, nil
}
