package gitsync

import (
	"bytes"
	"fmt"
	"iter"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// rollUpObjects lists the objects of the packs roll (in dir) and loose,
// one a line, as git pack-objects reads them: each tree and blob that a
// commit of those packs reaches through trees of those packs with its
// path, which git's delta search groups objects by (the versions of one
// file delta well against each other), the others without. git's own
// --stdin-packs finds the paths by walking every commit of the history
// (the commits of the packs left out too), which made a roll-up's time
// grow with the history; this reads only the packs rolled up.
func rollUpObjects(dir string, roll []string, loose iter.Seq[plumbing.Hash]) ([]byte, error) {
	rs, err := openRollSet(dir, roll)
	if err != nil {
		return nil, err
	}
	defer rs.close()
	names, err := rs.paths()
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	listed := make(map[plumbing.Hash]bool, len(rs.where))
	line := func(h plumbing.Hash) {
		if listed[h] {
			return
		}
		listed[h] = true
		out.WriteString(h.String())
		if p, ok := names[h]; ok && p != "" {
			out.WriteString(" " + p)
		}
		out.WriteByte('\n')
	}
	for _, p := range rs.packs {
		for i := range p.idx.n {
			line(p.idx.hash(i))
		}
	}
	for h := range loose {
		line(h)
	}
	return out.Bytes(), nil
}

// rollSet reads the objects of the packs a roll-up rolls up, without the
// repository's lock: only a repack removes packs, and it runs alone.
type rollSet struct {
	packs []rollPack
	where map[plumbing.Hash]rollPlace
}

type rollPack struct {
	idx *diskIndex
	pf  *packfile.Packfile
}

// rollPlace is where an object of a rollSet is: a pack and the offset.
type rollPlace struct {
	pack int
	off  int64
}

// rollCache is the memory a rollSet keeps inflated objects in (the
// bases of deltas).
const rollCache = 16 << 20

func openRollSet(dir string, roll []string) (*rollSet, error) {
	fsys := osfs.New(dir)
	c := cache.NewObjectLRU(rollCache)
	rs := &rollSet{where: map[plumbing.Hash]rollPlace{}}
	for _, base := range roll {
		idx, err := openDiskIndex(filepath.Join(dir, base+".idx"))
		if err != nil {
			rs.close()
			return nil, err
		}
		f, err := fsys.Open(base + ".pack")
		if err != nil {
			rs.close()
			return nil, fmt.Errorf("open pack %s: %w", base, err)
		}
		// Without a file system the reader inflates objects into
		// memory: these are trees and commits.
		rs.packs = append(rs.packs, rollPack{idx: idx, pf: packfile.NewPackfileWithCache(idx, nil, f, c, 0)})
		for i := range idx.n {
			off, err := idx.offset(i)
			if err != nil {
				rs.close()
				return nil, fmt.Errorf("pack index %s: %w", base, err)
			}
			rs.where[idx.hash(i)] = rollPlace{len(rs.packs) - 1, off}
		}
	}
	return rs, nil
}

func (rs *rollSet) close() {
	for _, p := range rs.packs {
		p.pf.Close()
	}
}

// paths names the trees and blobs of the set that its commits reach
// through its own trees by their path (a root tree by ""): what git's
// walk would have found for them.
func (rs *rollSet) paths() (map[plumbing.Hash]string, error) {
	names := map[plumbing.Hash]string{}
	type todo struct {
		h    plumbing.Hash
		path string
	}
	var stack []todo
	for _, p := range rs.packs {
		commits, err := p.pf.GetByType(plumbing.CommitObject)
		if err != nil {
			return nil, err
		}
		err = commits.ForEach(func(o plumbing.EncodedObject) error {
			var c object.Commit
			if err := c.Decode(o); err != nil {
				return fmt.Errorf("commit %s: %w", o.Hash(), err)
			}
			if _, ok := names[c.TreeHash]; !ok && rs.has(c.TreeHash) {
				names[c.TreeHash] = ""
				stack = append(stack, todo{c.TreeHash, ""})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	for len(stack) > 0 {
		t := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		tree, err := rs.tree(t.h)
		if err != nil {
			return nil, err
		}
		for _, e := range tree.Entries {
			if _, ok := names[e.Hash]; ok || e.Mode == filemode.Submodule || !rs.has(e.Hash) {
				continue
			}
			path := e.Name
			if t.path != "" {
				path = t.path + "/" + e.Name
			}
			if strings.ContainsRune(path, '\n') {
				path = "" // a line of git's input cannot hold it
			}
			names[e.Hash] = path
			if e.Mode == filemode.Dir {
				stack = append(stack, todo{e.Hash, path})
			}
		}
	}
	return names, nil
}

func (rs *rollSet) has(h plumbing.Hash) bool {
	_, ok := rs.where[h]
	return ok
}

// tree reads and decodes the tree h of the set.
func (rs *rollSet) tree(h plumbing.Hash) (*object.Tree, error) {
	at := rs.where[h]
	o, err := rs.packs[at.pack].pf.GetByOffset(at.off)
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", h, err)
	}
	var t object.Tree
	if err := t.Decode(o); err != nil {
		return nil, fmt.Errorf("tree %s: %w", h, err)
	}
	return &t, nil
}
