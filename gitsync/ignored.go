package gitsync

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os/exec"
	"path"
	"slices"
	"strings"
)

// Ignored lists the untracked paths under dir that git ignores
// (.gitignore, .git/info/exclude, core.excludesFile), relative to dir and
// slash-separated; a wholly ignored directory is one entry. Tracked files
// are never in it, whatever the ignore rules say: a commit records them.
// A directory outside a git work tree, or git missing from PATH, ignores
// nothing; when dir itself is ignored, nothing below it is left out
// either (it was asked for by name).
func Ignored(ctx context.Context, dir string) ([]string, error) {
	if _, err := WorkTreeRoot(ctx, dir); errors.Is(err, ErrNotWorkTree) || errors.Is(err, exec.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	out, err := workTreeGit(ctx, dir, nil, "ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "-z")
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, p := range strings.Split(string(out), "\x00") {
		p = strings.TrimSuffix(p, "/")
		if p != "" && p != "." {
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// Without is fsys without the files and directories at paths (and
// everything below them): they do not exist for Open, Stat, ReadFile and
// ReadDir. With no paths it is fsys.
func Without(fsys fs.FS, paths []string) fs.FS {
	if len(paths) == 0 {
		return fsys
	}
	hidden := make(map[string]bool, len(paths))
	for _, p := range paths {
		hidden[p] = true
	}
	return &withoutFS{fsys: fsys, hidden: hidden}
}

type withoutFS struct {
	fsys   fs.FS
	hidden map[string]bool
}

// check refuses a hidden path as one that does not exist.
func (w *withoutFS) check(op, name string) error {
	for p := name; p != "." && p != "/" && p != ""; p = path.Dir(p) {
		if w.hidden[p] {
			return &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
		}
	}
	return nil
}

func (w *withoutFS) Open(name string) (fs.File, error) {
	if err := w.check("open", name); err != nil {
		return nil, err
	}
	f, err := w.fsys.Open(name)
	if err != nil {
		return nil, err
	}
	if d, ok := f.(fs.ReadDirFile); ok {
		return &withoutDir{ReadDirFile: d, w: w, dir: name}, nil
	}
	return f, nil
}

func (w *withoutFS) Stat(name string) (fs.FileInfo, error) {
	if err := w.check("stat", name); err != nil {
		return nil, err
	}
	return fs.Stat(w.fsys, name)
}

func (w *withoutFS) ReadFile(name string) ([]byte, error) {
	if err := w.check("read", name); err != nil {
		return nil, err
	}
	return fs.ReadFile(w.fsys, name)
}

func (w *withoutFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := w.check("readdir", name); err != nil {
		return nil, err
	}
	es, err := fs.ReadDir(w.fsys, name)
	return w.visible(name, es), err
}

// visible leaves the hidden entries of directory dir out of es.
func (w *withoutFS) visible(dir string, es []fs.DirEntry) []fs.DirEntry {
	return slices.DeleteFunc(es, func(e fs.DirEntry) bool { return w.hidden[path.Join(dir, e.Name())] })
}

// withoutDir is an open directory of a withoutFS.
type withoutDir struct {
	fs.ReadDirFile
	w   *withoutFS
	dir string
}

func (d *withoutDir) ReadDir(n int) ([]fs.DirEntry, error) {
	for {
		es, err := d.ReadDirFile.ReadDir(n)
		vis := d.w.visible(d.dir, es)
		// A batch of hidden entries only is not the end of the listing.
		if len(vis) > 0 || len(es) == 0 || n <= 0 || err != nil {
			if n > 0 && len(vis) == 0 && err == nil {
				err = io.EOF
			}
			return vis, err
		}
	}
}
