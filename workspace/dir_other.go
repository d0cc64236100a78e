//go:build !linux

package workspace

import "io/fs"

// openFast is Linux's short way to open a file; elsewhere Open's checks
// always decide.
func (d *Dir) openFast(name string) (fs.File, bool) { return nil, false }

// readDirFast is Linux's short way to list a directory, sorted by name.
func (d *Dir) readDirFast(name string) (es []fs.DirEntry, ok bool, err error) {
	return nil, false, nil
}

// openListed is Linux's short way to open a listed file.
func (d *Dir) openListed(name string, e fs.DirEntry) (fs.File, bool) { return nil, false }

// readListed is Linux's short way to read a listed file.
func (d *Dir) readListed(name string, e fs.DirEntry, max int64) ([]byte, bool) { return nil, false }
