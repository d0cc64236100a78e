package gitsync

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-billy/v5"
)

// looseFS is the repository's file system as go-git's storage reads it
// here: the pack directory lists no pack, so that go-git reads loose
// objects (and alternates) only and never loads a pack index of its own
// (a MemoryIndex per pack, read again whenever the pack directory
// changed); a packSet reads the packs.
type looseFS struct {
	billy.Filesystem
}

// packDir is the pack directory as go-git names it.
const packDir = "objects/pack"

// ReadDir lists a directory, in the pack directory without the packs.
func (fs looseFS) ReadDir(p string) ([]os.FileInfo, error) {
	infos, err := fs.Filesystem.ReadDir(p)
	if err != nil || path.Clean(filepath.ToSlash(p)) != packDir {
		return infos, err
	}
	return slices.DeleteFunc(infos, func(fi os.FileInfo) bool { return strings.HasSuffix(fi.Name(), ".pack") }), nil
}
