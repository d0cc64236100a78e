package daemon

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"io/fs"
	"path"
	"runtime"
	"sync"
	"time"
)

// racyWindow is how recent a file's change time may be for its stat
// data alone to name its content: a file changed within it of the scan
// (file times tick coarsely) is read and hashed, as git does with its
// "racily clean" entries.
const racyWindow = 2 * time.Second

// contentID names a working tree's content: "worktree:" and a hash of
// every file's path and stat data (size, modification and change time,
// inode; .git skipped), without reading the files, so a tree of 10,000
// agents is ready in a listing's time. A file changed within racyWindow
// of the scan is hashed by its bytes instead. Any change of a file's
// bytes gives a new id (its change time moves; a recent one is read),
// so a served prompt or an index is never taken for current when it is
// not; files untouched give the same id in any process, so a restart
// finds its index current. A file rewritten with the same bytes may
// give a new id: a redeploy that re-indexes nothing.
func contentID(fsys fs.FS) (string, error) {
	scan, err := scanTree(fsys, time.Now())
	return scan.id, err
}

// treeScan is what one walk of a working tree finds: its contentID and
// the listing of every directory it entered (all but .git), by slash
// path, sorted by name as fs.ReadDir lists them.
type treeScan struct {
	id   string
	dirs map[string][]fs.DirEntry
}

// scanTree walks fsys as fs.WalkDir would and hashes what contentID
// does, in the same order, so an id does not depend on how the walk was
// done (a restart after an upgrade finds its index current). The
// directories are listed and their files stat'ed (or, racy, read) by up
// to GOMAXPROCS goroutines; the hash is then written in walk order. The
// error is the one fs.WalkDir would have stopped at.
func scanTree(fsys fs.FS, now time.Time) (treeScan, error) {
	if _, err := fs.Stat(fsys, "."); err != nil {
		return treeScan{}, err
	}
	w := &treeWalk{fsys: fsys, racy: now.Add(-racyWindow), slots: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)-1))}
	root := &scanDir{path: "."}
	w.list(root)
	w.wg.Wait()
	h := sha256.New()
	scan := treeScan{dirs: map[string][]fs.DirEntry{}}
	if err := root.hash(h, scan.dirs); err != nil {
		return treeScan{}, err
	}
	scan.id = "worktree:" + hex.EncodeToString(h.Sum(nil))[:20]
	return scan, nil
}

// treeWalk lists a tree's directories concurrently.
type treeWalk struct {
	fsys  fs.FS
	racy  time.Time
	slots chan struct{} // a goroutine of its own per slot
	wg    sync.WaitGroup
}

// scanDir is a directory of the walk: its entries, and for each entry
// either the bytes it adds to the hash or the directory it is.
type scanDir struct {
	path    string
	entries []fs.DirEntry
	err     error      // the listing failed
	parts   []scanPart // in entry order
}

// scanPart is what an entry adds to the hash: a directory's own parts,
// a file's bytes, or the error the walk stops at.
type scanPart struct {
	sub  *scanDir
	data []byte
	err  error
}

// list lists d and stats its files, handing each subdirectory to a
// goroutine of its own when a slot is free and listing it here
// otherwise.
func (w *treeWalk) list(d *scanDir) {
	d.entries, d.err = fs.ReadDir(w.fsys, d.path)
	if d.err != nil {
		return
	}
	var buf []byte
	for _, e := range d.entries {
		p := path.Join(d.path, e.Name())
		if e.IsDir() {
			if e.Name() == ".git" {
				continue
			}
			if buf != nil {
				d.parts, buf = append(d.parts, scanPart{data: buf}), nil
			}
			sub := &scanDir{path: p}
			d.parts = append(d.parts, scanPart{sub: sub})
			select {
			case w.slots <- struct{}{}:
				w.wg.Add(1)
				go func() {
					defer func() { <-w.slots; w.wg.Done() }()
					w.list(sub)
				}()
			default:
				w.list(sub)
			}
			continue
		}
		var err error
		if buf, err = w.file(buf, p, e); err != nil {
			d.parts = append(d.parts, scanPart{data: buf, err: err})
			return // fs.WalkDir stops here
		}
	}
	if buf != nil {
		d.parts = append(d.parts, scanPart{data: buf})
	}
}

// file appends to buf what file p, entry e, adds to the hash: its type
// when it is not a regular file, else its stat data or, racy, its bytes.
func (w *treeWalk) file(buf []byte, p string, e fs.DirEntry) ([]byte, error) {
	if !e.Type().IsRegular() {
		return fmt.Appendf(buf, "%s\x00%s\x00", p, e.Type()), nil
	}
	st, size, err := lstatEntry(w.fsys, p, e)
	if err != nil {
		return buf, err
	}
	if !st.mtime.Before(w.racy) || !st.ctime.Before(w.racy) {
		return appendBytes(buf, w.fsys, p, e)
	}
	buf = append(append(buf, p...), "\x00s\x00"...)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(size))
	buf = binary.LittleEndian.AppendUint64(buf, uint64(st.mtime.UnixNano()))
	buf = binary.LittleEndian.AppendUint64(buf, uint64(st.ctime.UnixNano()))
	buf = binary.LittleEndian.AppendUint64(buf, st.ino)
	return binary.LittleEndian.AppendUint64(buf, st.dev), nil
}

// hash writes d's parts into h in walk order and records d's listing
// and its subdirectories' in dirs, returning the error the walk stops
// at.
func (d *scanDir) hash(h hash.Hash, dirs map[string][]fs.DirEntry) error {
	if d.err != nil {
		return d.err
	}
	dirs[d.path] = d.entries
	for _, part := range d.parts {
		if part.sub != nil {
			if err := part.sub.hash(h, dirs); err != nil {
				return err
			}
			continue
		}
		h.Write(part.data)
		if part.err != nil {
			return part.err
		}
	}
	return nil
}

// appendBytes appends file p's path, size and bytes to buf. e is its
// entry in its directory's listing: a workspace.Dir reads the file
// without looking it up again (ReadListed).
func appendBytes(buf []byte, fsys fs.FS, p string, e fs.DirEntry) ([]byte, error) {
	b, ok := []byte(nil), false
	if lr, is := fsys.(interface {
		ReadListed(string, fs.DirEntry, int64) ([]byte, bool)
	}); is {
		b, ok = lr.ReadListed(p, e, maxListedRead)
	}
	if !ok {
		var err error
		if b, err = fs.ReadFile(fsys, p); err != nil {
			return buf, err
		}
	}
	buf = fmt.Appendf(buf, "%s\x00b%d\x00", p, len(b))
	return append(buf, b...), nil
}

// maxListedRead is the largest racy file appendBytes reads in one call;
// a larger one is read as any file is.
const maxListedRead = 1 << 20

// infoStat is e's stat data and size through e.Info.
func infoStat(e fs.DirEntry) (fileStat, int64, error) {
	info, err := e.Info()
	if err != nil {
		return fileStat{}, 0, err
	}
	return statOf(info), info.Size(), nil
}

// fileStat is what contentID keys a file by besides its path and size.
// Where the platform has no change time or inode (statOf), ctime is
// the modification time and ino, dev are 0.
type fileStat struct {
	mtime, ctime time.Time
	ino, dev     uint64
}
