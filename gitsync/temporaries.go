package gitsync

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Temporary files in a pack directory: git's ("tmp_pack_XXXXXX" and the
// like from pack-objects and index-pack, ".tmp-<pid>-pack-…" from
// repack) and this package's own (ownTemporary, written and renamed or
// removed within one call).
const ownTemporary = "tmp_quire_"

func isGitTemporary(name string) bool {
	return strings.HasPrefix(name, "tmp_") && !strings.HasPrefix(name, ownTemporary) || strings.HasPrefix(name, ".tmp-")
}

func isTemporary(name string) bool {
	return strings.HasPrefix(name, "tmp_") || strings.HasPrefix(name, ".tmp-")
}

// Ages past which RemoveTemporaries removes what a crash left: a
// temporary pack file that no running repack of ours writes (a fetch's
// git writes one for at most its timeout), and a push's quarantine (a
// push lasts at most the host's request timeout, 5 minutes by default).
// Open, which also opens repositories no daemon runs in (a work tree of
// quire prompt --rev, where the owner's git may run for long), removes
// only what is older than a day.
const (
	staleTemporary  = 5 * time.Minute
	staleQuarantine = time.Hour
	staleAtOpen     = 24 * time.Hour
)

// RemoveTemporaries removes the temporary pack files older than a few
// minutes and the push quarantines older than an hour that a crash (or a
// kill -9) left in a repository the daemon keeps, and returns how many;
// no temporary pack file while a repack holds the repack lock (one a
// killed daemon left running).
func (r *Repository) RemoveTemporaries() int {
	return removeStaleTemporaries(r.st.refs.commonDir, r.st.packDir, staleTemporary, staleQuarantine)
}

func removeStaleTemporaries(commonDir, packDir string, temporary, quarantine time.Duration) int {
	n := 0
	ms, _ := filepath.Glob(filepath.Join(commonDir, quarantinePrefix+"*"))
	for _, m := range ms {
		if st, err := os.Stat(m); err == nil && time.Since(st.ModTime()) > quarantine && os.RemoveAll(m) == nil {
			n++
		}
	}
	return n + sweepTemporaries(commonDir, packDir, temporary, isTemporary)
}

// sweepTemporaries removes the temporary files of r's pack directory
// that which selects and that are older than minAge; it returns how many.
// While a repack holds the repository's repack lock (one of another
// process, or one a killed process left running) nothing is removed: it
// may be writing them.
func (r *Repository) sweepTemporaries(minAge time.Duration, which func(string) bool) int {
	return sweepTemporaries(r.st.refs.commonDir, r.st.packDir, minAge, which)
}

func sweepTemporaries(commonDir, packDir string, minAge time.Duration, which func(string) bool) int {
	lock, err := takeRepackLock(commonDir)
	if err != nil || lock == nil {
		return 0
	}
	defer lock.Close()
	return removeTemporaries(packDir, minAge, which)
}

// removeTemporaries is sweepTemporaries for a caller that holds the
// repack lock.
func removeTemporaries(packDir string, minAge time.Duration, which func(string) bool) int {
	des, err := os.ReadDir(packDir)
	if err != nil {
		return 0
	}
	n := 0
	for _, de := range des {
		if !which(de.Name()) {
			continue
		}
		p := filepath.Join(packDir, de.Name())
		if fi, err := de.Info(); err == nil && time.Since(fi.ModTime()) >= minAge && os.RemoveAll(p) == nil {
			n++
		}
	}
	return n
}

// createTemp is os.CreateTemp(dir, prefix+"*") through openFile: a new
// file, read-write, that no other call made.
func createTemp(dir, prefix string) (*os.File, error) {
	for range 10000 {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10))
		f, err := openFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, &fs.PathError{Op: "createtemp", Path: filepath.Join(dir, prefix+"*"), Err: fs.ErrExist}
}
