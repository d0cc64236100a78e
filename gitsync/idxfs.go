package gitsync

import (
	"bytes"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-billy/v5"
)

// idxFS is the repository's file system as go-git reads it, except that a
// pack index (.idx) is read whole at once when opened (go-git decodes an
// index with small unbuffered reads, a system call per fan-out entry, and
// it reads every index again each time the pack directory changes), and
// that a pack is listed only once its index is there. With hidePacks
// the pack directory lists no pack at all: go-git's storage then reads
// loose objects only, the packs being read by a packSet.
type idxFS struct {
	billy.Filesystem
	hidePacks bool
}

// maxIdxRead bounds the index files read whole (larger ones are read as
// go-git does).
const maxIdxRead = 64 << 20

func (fs idxFS) Open(name string) (billy.File, error) {
	f, err := fs.Filesystem.Open(name)
	if err != nil || !strings.HasSuffix(name, ".idx") {
		return f, err
	}
	b, err := io.ReadAll(io.LimitReader(f, maxIdxRead+1))
	if err != nil {
		f.Close()
		return nil, err
	}
	if len(b) > maxIdxRead {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			f.Close()
			return nil, err
		}
		return f, nil
	}
	return &idxFile{File: f, r: bytes.NewReader(b)}, nil
}

// packDir is the pack directory as go-git names it.
const packDir = "objects/pack"

// ReadDir lists a directory. In the pack directory, a pack whose index is
// not there is left out: git and this package install a pack by renaming
// the pack, then its index, into place, and go-git, listing the pack in
// between, failed reads with "packfile not found" (it loads the index of
// every pack listed) and, keeping the indexes loaded before that failure
// as the whole list, missed objects until it listed again.
func (fs idxFS) ReadDir(p string) ([]os.FileInfo, error) {
	infos, err := fs.Filesystem.ReadDir(p)
	if err != nil || path.Clean(filepath.ToSlash(p)) != packDir {
		return infos, err
	}
	if fs.hidePacks {
		return slices.DeleteFunc(infos, func(fi os.FileInfo) bool { return strings.HasSuffix(fi.Name(), ".pack") }), nil
	}
	idx := map[string]bool{}
	for _, fi := range infos {
		if base, ok := strings.CutSuffix(fi.Name(), ".idx"); ok {
			idx[base] = true
		}
	}
	return slices.DeleteFunc(infos, func(fi os.FileInfo) bool {
		base, ok := strings.CutSuffix(fi.Name(), ".pack")
		return ok && !idx[base]
	}), nil
}

// idxFile is an index file read into memory; closing it closes the file.
type idxFile struct {
	billy.File
	r *bytes.Reader
}

func (f *idxFile) Read(p []byte) (int, error)              { return f.r.Read(p) }
func (f *idxFile) ReadAt(p []byte, off int64) (int, error) { return f.r.ReadAt(p, off) }
func (f *idxFile) Seek(off int64, whence int) (int64, error) {
	return f.r.Seek(off, whence)
}
