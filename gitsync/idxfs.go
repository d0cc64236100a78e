package gitsync

import (
	"bytes"
	"io"
	"strings"

	"github.com/go-git/go-billy/v5"
)

// idxFS is the repository's file system as go-git reads it, except that a
// pack index (.idx) is read whole at once when opened: go-git decodes an
// index with small unbuffered reads (a system call per fan-out entry),
// and it reads every index again each time the pack directory changes.
type idxFS struct {
	billy.Filesystem
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
