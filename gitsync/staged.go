package gitsync

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quirehq/quire/workspace"
)

// Staged is what git's index holds in a work tree (what the next commit
// records) as a read-only file system: the staged blobs, not the files on
// disk, so untracked and ignored files are not in it and a file changed
// after `git add` reads as it was added. It is read with the git CLI
// (`git ls-files --stage`, `git cat-file`), which honours GIT_INDEX_FILE:
// in a pre-commit hook it is the index being committed, `git commit -a`
// and `git commit PATH` included.
//
// Like Snapshot, it implements fs.FS, fs.ReadFileFS, fs.ReadDirFS and
// fs.StatFS; symbolic links are reported with fs.ModeSymlink and read as
// their target path; submodules (gitlinks) and unmerged paths are left
// out (see Unmerged). Modification times are zero.
type Staged struct {
	ctx      context.Context
	dir      string
	files    map[string]*stagedFile
	dirs     map[string][]*stagedFile // directory ("." for the root) → entries in name order
	unmerged []string
}

// stagedFile is one entry of the index, or a directory it implies.
type stagedFile struct {
	name string // base name
	mode fs.FileMode
	oid  string
	size int64
	data []byte // the content, read when the index was opened; nil: read on demand
}

// OpenStaged reads the index of the work tree dir is in, limited to dir
// (its paths are relative to dir). The text files a workspace check reads
// (workspace.IsTextFile, up to workspace.MaxFileBytes) are read at once,
// other blobs when they are opened, with ctx. A directory outside a work
// tree is ErrNotWorkTree.
func OpenStaged(ctx context.Context, dir string) (*Staged, error) {
	if _, err := WorkTreeRoot(ctx, dir); err != nil {
		return nil, err
	}
	out, err := workTreeGit(ctx, dir, nil, "ls-files", "--stage", "-z")
	if err != nil {
		return nil, fmt.Errorf("read git's index in %s: %w", dir, err)
	}
	s := &Staged{ctx: ctx, dir: dir, files: map[string]*stagedFile{}, dirs: map[string][]*stagedFile{".": nil}}
	unmerged := map[string]bool{}
	for _, rec := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if rec == "" {
			continue
		}
		// <mode> SP <object> SP <stage> TAB <path>
		meta, p, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 {
			return nil, fmt.Errorf("read git's index in %s: unexpected git ls-files line %q", dir, rec)
		}
		if f[2] != "0" {
			unmerged[p] = true
			continue
		}
		mode, ok := stagedMode(f[0])
		if !ok { // a submodule: nothing of it is in this repository
			continue
		}
		s.files[p] = &stagedFile{name: path.Base(p), mode: mode, oid: f[1]}
	}
	for p := range unmerged {
		s.unmerged = append(s.unmerged, p)
	}
	slices.Sort(s.unmerged)
	if err := s.readBlobs(ctx); err != nil {
		return nil, fmt.Errorf("read git's index in %s: %w", dir, err)
	}
	s.buildDirs()
	return s, nil
}

// stagedMode is the fs mode of an index entry's git mode; false for a
// gitlink.
func stagedMode(m string) (fs.FileMode, bool) {
	switch m {
	case "100755":
		return 0o755, true
	case "120000":
		return fs.ModeSymlink | 0o777, true
	case "160000":
		return 0, false
	default:
		return 0o644, true
	}
}

// readBlobs asks git for every blob's size, and for the content of the
// text files within the size limit.
func (s *Staged) readBlobs(ctx context.Context) error {
	if len(s.files) == 0 {
		return nil
	}
	var oids bytes.Buffer
	paths := map[string]string{} // a path of each blob, for messages
	for p, f := range s.files {
		fmt.Fprintln(&oids, f.oid)
		paths[f.oid] = p
	}
	out, err := workTreeGit(ctx, s.dir, &oids, "cat-file", "--batch-check=%(objectname) %(objectsize)")
	if err != nil {
		return err
	}
	sizes := map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		oid, size, _ := strings.Cut(line, " ")
		n, err := strconv.ParseInt(size, 10, 64)
		if err != nil {
			return fmt.Errorf("%s: its staged blob %s is missing from the repository (git cat-file says %q)", paths[oid], oid, line)
		}
		sizes[oid] = n
	}
	oids.Reset()
	text := map[string][]*stagedFile{}
	for p, f := range s.files {
		f.size = sizes[f.oid]
		if f.mode.IsRegular() && f.size <= workspace.MaxFileBytes && workspace.IsTextFile(p) {
			if text[f.oid] == nil {
				fmt.Fprintln(&oids, f.oid)
			}
			text[f.oid] = append(text[f.oid], f)
		}
	}
	if len(text) == 0 {
		return nil
	}
	if out, err = workTreeGit(ctx, s.dir, &oids, "cat-file", "--batch"); err != nil {
		return err
	}
	return readBatch(bufio.NewReader(bytes.NewReader(out)), func(oid string, data []byte) {
		for _, f := range text[oid] {
			f.data = data
		}
	})
}

// readBatch reads `git cat-file --batch` output: a "<oid> <type> <size>"
// line, the content and a newline for each object.
func readBatch(r *bufio.Reader, found func(oid string, data []byte)) error {
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF && line == "" {
			return nil
		}
		if err != nil {
			return fmt.Errorf("git cat-file: %w", err)
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			return fmt.Errorf("git cat-file: %s", strings.TrimSpace(line))
		}
		n, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return fmt.Errorf("git cat-file: unexpected line %q", line)
		}
		data := make([]byte, n+1)
		if _, err := io.ReadFull(r, data); err != nil {
			return fmt.Errorf("git cat-file: %w", err)
		}
		found(f[0], data[:n])
	}
}

// buildDirs lists each directory's entries, the directories the paths
// imply included.
func (s *Staged) buildDirs() {
	for p, f := range s.files {
		child := f
		for d := path.Dir(p); ; d = path.Dir(d) {
			_, seen := s.dirs[d]
			s.dirs[d] = append(s.dirs[d], child)
			if seen { // "." is there from the start
				break
			}
			child = &stagedFile{name: path.Base(d), mode: fs.ModeDir | 0o755}
		}
	}
	for _, es := range s.dirs {
		slices.SortFunc(es, func(a, b *stagedFile) int { return strings.Compare(a.name, b.name) })
	}
}

// Unmerged lists the paths with a merge conflict in the index (stages 1
// to 3), which the file system leaves out: nothing can be committed until
// they are resolved.
func (s *Staged) Unmerged() []string { return s.unmerged }

// entry finds a valid path's file or directory.
func (s *Staged) entry(op, name string) (*stagedFile, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	if f, ok := s.files[name]; ok {
		return f, nil
	}
	if _, ok := s.dirs[name]; ok {
		return &stagedFile{name: path.Base(name), mode: fs.ModeDir | 0o755}, nil
	}
	return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
}

// content is a file's blob, read now when it was not read with the index.
func (s *Staged) content(op, name string, f *stagedFile) ([]byte, error) {
	if f.data != nil {
		return f.data, nil
	}
	b, err := workTreeGit(s.ctx, s.dir, nil, "cat-file", "blob", f.oid)
	if err != nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: err}
	}
	return b, nil
}

// Open opens the named file or directory.
func (s *Staged) Open(name string) (fs.File, error) {
	f, err := s.entry("open", name)
	if err != nil {
		return nil, err
	}
	if f.mode.IsDir() {
		return &stagedDir{info: f.info(), entries: s.dirs[name]}, nil
	}
	b, err := s.content("open", name, f)
	if err != nil {
		return nil, err
	}
	return &file{Reader: bytes.NewReader(b), info: f.info()}, nil
}

// ReadFile reads the named file. The returned slice is the caller's.
func (s *Staged) ReadFile(name string) ([]byte, error) {
	f, err := s.entry("read", name)
	if err != nil {
		return nil, err
	}
	if f.mode.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("is a directory")}
	}
	b, err := s.content("read", name, f)
	return bytes.Clone(b), err
}

// Stat describes the named file or directory.
func (s *Staged) Stat(name string) (fs.FileInfo, error) {
	f, err := s.entry("stat", name)
	if err != nil {
		return nil, err
	}
	return f.info(), nil
}

// ReadDir lists the named directory in name order.
func (s *Staged) ReadDir(name string) ([]fs.DirEntry, error) {
	f, err := s.entry("readdir", name)
	if err != nil {
		return nil, err
	}
	if !f.mode.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	return dirEntriesOf(s.dirs[name]), nil
}

func dirEntriesOf(es []*stagedFile) []fs.DirEntry {
	out := make([]fs.DirEntry, len(es))
	for i, e := range es {
		out[i] = fs.FileInfoToDirEntry(e.info())
	}
	return out
}

func (f *stagedFile) info() *fileInfo {
	return &fileInfo{name: f.name, size: f.size, mode: f.mode, modTime: time.Time{}}
}

// stagedDir is an open directory of a Staged.
type stagedDir struct {
	info    *fileInfo
	entries []*stagedFile
	off     int
}

func (d *stagedDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *stagedDir) Close() error               { return nil }
func (d *stagedDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: errors.New("is a directory")}
}

func (d *stagedDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.off:]
	if n <= 0 {
		d.off = len(d.entries)
		return dirEntriesOf(rest), nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	rest = rest[:min(n, len(rest))]
	d.off += len(rest)
	return dirEntriesOf(rest), nil
}
