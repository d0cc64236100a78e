package daemon

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"io/fs"
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
	return contentIDAt(fsys, time.Now())
}

// contentIDAt is contentID for a scan that starts at now.
func contentIDAt(fsys fs.FS, now time.Time) (string, error) {
	h := sha256.New()
	racy := now.Add(-racyWindow)
	err := fs.WalkDir(fsys, ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if e.Name() == ".git" {
				return fs.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() {
			fmt.Fprintf(h, "%s\x00%s\x00", p, e.Type())
			return nil
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		st := statOf(info)
		if !st.mtime.Before(racy) || !st.ctime.Before(racy) {
			return hashBytes(h, fsys, p)
		}
		fmt.Fprintf(h, "%s\x00s\x00", p)
		var b [40]byte
		binary.LittleEndian.PutUint64(b[0:], uint64(info.Size()))
		binary.LittleEndian.PutUint64(b[8:], uint64(st.mtime.UnixNano()))
		binary.LittleEndian.PutUint64(b[16:], uint64(st.ctime.UnixNano()))
		binary.LittleEndian.PutUint64(b[24:], st.ino)
		binary.LittleEndian.PutUint64(b[32:], st.dev)
		h.Write(b[:])
		return nil
	})
	if err != nil {
		return "", err
	}
	return "worktree:" + hex.EncodeToString(h.Sum(nil))[:20], nil
}

// hashBytes adds file p's path, size and bytes to h.
func hashBytes(h hash.Hash, fsys fs.FS, p string) error {
	b, err := fs.ReadFile(fsys, p)
	if err != nil {
		return err
	}
	fmt.Fprintf(h, "%s\x00b%d\x00", p, len(b))
	h.Write(b)
	return nil
}

// fileStat is what contentID keys a file by besides its path and size.
// Where the platform has no change time or inode (statOf), ctime is
// the modification time and ino, dev are 0.
type fileStat struct {
	mtime, ctime time.Time
	ino, dev     uint64
}
