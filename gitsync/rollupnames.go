package gitsync

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// rollUpObjects lists the objects of the packs roll (in dir) and loose,
// one a line, as git pack-objects reads them, each tree and blob of the
// packs of a commit or a small push with its path, which git's delta
// search groups objects by (the versions of one file delta well against
// each other): the path that the commits of those packs reach it by
// through the trees of those packs. git's own --stdin-packs finds the
// paths by walking every commit of the history (the commits of the packs
// left out too), which made a roll-up's time grow with the history. The
// objects of larger packs (those rolled up before) go without a path:
// they are mostly deltas already, which git reuses, and finding their
// paths again at each roll-up made the daemon's CPU for a roll-up grow
// with what it rolls up rather than with what is new. The paths book
// holds (nil: none) are taken from it, not found again: the trees of a
// commit whose root tree it names are not read.
func rollUpObjects(dir string, roll []string, loose iter.Seq[plumbing.Hash], book *pathBook) ([]byte, error) {
	rs, err := openRollSet(dir, roll)
	if err != nil {
		return nil, err
	}
	defer rs.close()
	names, err := rs.paths(book)
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

// namedMax is the most objects a pack may have for rollUpObjects to
// find the paths of its objects: a commit's own pack has a handful.
const namedMax = 256

// rollSet reads the objects of the small packs a roll-up rolls up,
// without the repository's lock: only a repack removes packs, and it
// runs alone.
type rollSet struct {
	packs []rollPack
	where map[plumbing.Hash]rollPlace // the objects of the small packs
	reads int                         // how many trees paths read
}

type rollPack struct {
	idx *diskIndex
	pf  *packfile.Packfile // nil for a pack of more than namedMax objects
}

// rollPlace is where an object of a rollSet is: a pack and the offset.
type rollPlace struct {
	pack int
	off  int64
}

func openRollSet(dir string, roll []string) (*rollSet, error) {
	fsys := osfs.New(dir)
	rs := &rollSet{where: map[plumbing.Hash]rollPlace{}}
	for _, base := range roll {
		idx, err := openDiskIndex(filepath.Join(dir, base+".idx"))
		if err != nil {
			rs.close()
			return nil, err
		}
		if idx.n > namedMax {
			rs.packs = append(rs.packs, rollPack{idx: idx})
			continue
		}
		f, err := fsys.Open(base + ".pack")
		if err != nil {
			rs.close()
			return nil, fmt.Errorf("open pack %s: %w", base, err)
		}
		// Without a file system the reader inflates objects into
		// memory (these are small); without a cache it does not hash
		// them again.
		rs.packs = append(rs.packs, rollPack{idx: idx, pf: packfile.NewPackfileWithCache(idx, nil, f, nil, 0)})
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
		if p.pf != nil {
			p.pf.Close()
		}
	}
}

// paths names the trees and blobs of the set that its commits reach
// through its own trees by their path (a root tree by ""): what git's
// walk would have found for them. The objects book names (the commits
// of this process wrote them) are named so without reading a tree;
// the trees of other commits are walked, down to a tree book named.
func (rs *rollSet) paths(book *pathBook) (map[plumbing.Hash]string, error) {
	names := map[plumbing.Hash]string{}
	for h := range rs.where {
		if p, ok := book.take(h); ok {
			if strings.ContainsRune(p, '\n') {
				p = "" // a line of git's input cannot hold it
			}
			names[h] = p
		}
	}
	type todo struct {
		h    plumbing.Hash
		path string
	}
	var stack []todo
	for _, p := range rs.packs {
		if p.pf == nil {
			continue
		}
		commits, err := p.pf.GetByType(plumbing.CommitObject)
		if err != nil {
			return nil, err
		}
		err = commits.ForEach(func(o plumbing.EncodedObject) error {
			tree, err := treeOfCommit(o)
			if err != nil {
				return err
			}
			if _, ok := names[tree]; !ok && rs.has(tree) {
				names[tree] = ""
				stack = append(stack, todo{tree, ""})
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
		b, err := rs.read(t.h)
		if err != nil {
			return nil, err
		}
		err = eachTreeEntry(b, func(mode, name []byte, h plumbing.Hash) {
			if _, ok := names[h]; ok || !rs.has(h) || string(mode) == "160000" {
				return
			}
			path := string(name)
			if t.path != "" {
				path = t.path + "/" + path
			}
			if strings.ContainsRune(path, '\n') {
				path = "" // a line of git's input cannot hold it
			}
			names[h] = path
			if string(mode) == "40000" {
				stack = append(stack, todo{h, path})
			}
		})
		if err != nil {
			return nil, fmt.Errorf("tree %s: %w", t.h, err)
		}
	}
	return names, nil
}

func (rs *rollSet) has(h plumbing.Hash) bool {
	_, ok := rs.where[h]
	return ok
}

// read returns the content of object h of the set.
func (rs *rollSet) read(h plumbing.Hash) ([]byte, error) {
	rs.reads++
	at := rs.where[h]
	o, err := rs.packs[at.pack].pf.GetByOffset(at.off)
	if err != nil {
		return nil, fmt.Errorf("read object %s: %w", h, err)
	}
	r, err := o.Reader()
	if err != nil {
		return nil, fmt.Errorf("read object %s: %w", h, err)
	}
	defer r.Close()
	return io.ReadAll(r)
}

// treeOfCommit is the tree of commit o (its first line).
func treeOfCommit(o plumbing.EncodedObject) (plumbing.Hash, error) {
	r, err := o.Reader()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer r.Close()
	var line [5 + 40]byte
	if _, err := io.ReadFull(r, line[:]); err != nil || string(line[:5]) != "tree " || !plumbing.IsHash(string(line[5:])) {
		return plumbing.ZeroHash, fmt.Errorf("commit %s: no tree line", o.Hash())
	}
	return plumbing.NewHash(string(line[5:])), nil
}

// eachTreeEntry calls fn with each entry of the tree b ("<mode>
// <name>\0<20-byte name>" each), without decoding the tree into a list.
func eachTreeEntry(b []byte, fn func(mode, name []byte, h plumbing.Hash)) error {
	for len(b) > 0 {
		sp := bytes.IndexByte(b, ' ')
		nul := bytes.IndexByte(b, 0)
		if sp < 0 || nul < sp || nul+21 > len(b) {
			return errors.New("a malformed entry")
		}
		var h plumbing.Hash
		copy(h[:], b[nul+1:nul+21])
		fn(b[:sp], b[sp+1:nul], h)
		b = b[nul+21:]
	}
	return nil
}
