package workspace

import (
	"io/fs"
)

// NoLinks reads fsys the way Dir reads a working tree: a symbolic link or
// a special file is an error (ErrSymlink, ErrNotRegular), never read. It
// is for file systems that report links without refusing them, such as a
// git commit's tree, whose link entries would otherwise read as the
// link's target path. Stat reports a link as a link together with the
// error, as Dir's does.
func NoLinks(fsys fs.FS) fs.FS { return &noLinks{fsys: fsys} }

type noLinks struct{ fsys fs.FS }

func (n *noLinks) check(op, name string) (fs.FileInfo, error) {
	fi, err := fs.Stat(n.fsys, name)
	if err != nil {
		return nil, err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fi, &fs.PathError{Op: op, Path: name, Err: ErrSymlink}
	case !fi.IsDir() && !fi.Mode().IsRegular():
		return fi, &fs.PathError{Op: op, Path: name, Err: ErrNotRegular}
	}
	return fi, nil
}

func (n *noLinks) Open(name string) (fs.File, error) {
	if _, err := n.check("open", name); err != nil {
		return nil, err
	}
	return n.fsys.Open(name)
}

func (n *noLinks) ReadFile(name string) ([]byte, error) {
	if _, err := n.check("read", name); err != nil {
		return nil, err
	}
	return fs.ReadFile(n.fsys, name)
}

func (n *noLinks) Stat(name string) (fs.FileInfo, error) { return n.check("stat", name) }

func (n *noLinks) ReadDir(name string) ([]fs.DirEntry, error) {
	if _, err := n.check("readdir", name); err != nil {
		return nil, err
	}
	return fs.ReadDir(n.fsys, name)
}

func (n *noLinks) Sub(dir string) (fs.FS, error) {
	if _, err := n.check("sub", dir); err != nil {
		return nil, err
	}
	sub, err := fs.Sub(n.fsys, dir)
	if err != nil {
		return nil, err
	}
	return &noLinks{fsys: sub}, nil
}
