package gitsync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// quarantinePrefix names the directories (in the repository's common
// directory, next to objects/) that hold a push's pack until its refs are
// accepted. Neither git nor go-git looks into them.
const quarantinePrefix = "quire-incoming-"

// quarantine is one push's pack, indexed on disk and not yet part of the
// repository.
type quarantine struct {
	dir  string // the quarantine directory (removed by close)
	pack string // objects/pack/pack-<sum>.pack inside dir
	idx  string
	sum  plumbing.Hash
	st   *filesystem.Storage
	// indexRSS is git index-pack's peak resident memory, in bytes.
	indexRSS int64
}

// largeObject is the size above which go-git reads a quarantined object
// from disk as it is used instead of into memory.
const largeObject = 1 << 20

// receivePack streams a pushed pack from body into a new quarantine of r
// with `git index-pack --stdin --fix-thin --strict`: bytes go to disk as
// they arrive, thin-pack bases are completed from the repository, every
// object is checked (fsck) and every object it names must exist. More than
// limit bytes of pack are refused while they arrive. A file system that is
// full is a *DiskFullError naming the repository.
func receivePack(ctx context.Context, r *Repository, body io.Reader, limit int64) (*quarantine, error) {
	dir, err := os.MkdirTemp(r.st.refs.commonDir, quarantinePrefix)
	if err != nil {
		if df := DiskFull(err); df != nil {
			return nil, df
		}
		return nil, fmt.Errorf("create quarantine: %w", err)
	}
	q := &quarantine{dir: dir}
	packDir := filepath.Join(dir, "objects", "pack")
	if err := os.MkdirAll(packDir, 0o755); err != nil {
		q.close()
		if df := DiskFull(err); df != nil {
			return nil, df
		}
		return nil, fmt.Errorf("create quarantine: %w", err)
	}
	tmp := filepath.Join(packDir, "tmp.pack")
	var stderr, stdout bytes.Buffer
	cmd := exec.CommandContext(ctx, "git",
		// Stream large blobs instead of inflating them in memory.
		"-c", "core.bigFileThreshold=1m",
		"index-pack", "--stdin", "--fix-thin", "--strict",
		"--max-input-size="+strconv.FormatInt(limit, 10), tmp)
	cmd.Dir = r.st.refs.commonDir
	cmd.Env = gitEnv("GIT_DIR=" + r.st.refs.commonDir)
	cmd.Stdout = &stdout
	cmd.Stderr = &limitedBuffer{b: &stderr, n: 4096}
	cmd.WaitDelay = 5 * time.Second
	in, err := cmd.StdinPipe()
	if err != nil {
		q.close()
		return nil, fmt.Errorf("index pack: %w", err)
	}
	if err := cmd.Start(); err != nil {
		q.close()
		return nil, fmt.Errorf("index pack: start git: %w", err)
	}
	_, copyErr := io.Copy(in, body)
	in.Close()
	waitErr := cmd.Wait()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		q.indexRSS = ru.Maxrss << 10 // KiB on Linux
	}
	if copyErr != nil && waitErr == nil {
		waitErr = copyErr
	}
	if waitErr != nil {
		q.close()
		if df := gitDiskFull(stderr.String(), r.st.refs.commonDir); df != nil {
			return nil, df
		}
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndex(msg, "fatal: "); i >= 0 {
			msg = msg[i+len("fatal: "):]
		}
		var mbe *http.MaxBytesError
		if errors.As(copyErr, &mbe) || errors.Is(copyErr, errTooLarge) || strings.Contains(msg, "maximum allowed size") {
			msg = fmt.Sprintf("push exceeds the %d-byte limit", limit)
		}
		if msg == "" {
			msg = waitErr.Error()
		}
		return nil, fmt.Errorf("%s", oneLine(msg))
	}
	// "pack\t<sum>" on stdout.
	f := strings.Fields(stdout.String())
	if len(f) == 0 {
		q.close()
		return nil, errors.New("index-pack reported no pack")
	}
	sum, ok := parseHash(f[len(f)-1])
	if !ok {
		q.close()
		return nil, fmt.Errorf("index-pack reported %q", stdout.String())
	}
	q.sum = sum
	base := filepath.Join(packDir, "pack-"+sum.String())
	q.pack, q.idx = base+".pack", base+".idx"
	if err := os.Rename(tmp, q.pack); err != nil {
		q.close()
		return nil, fmt.Errorf("quarantine pack: %w", err)
	}
	if err := os.Rename(filepath.Join(packDir, "tmp.idx"), q.idx); err != nil {
		q.close()
		return nil, fmt.Errorf("quarantine pack: %w", err)
	}
	q.st = filesystem.NewStorageWithOptions(osfs.New(dir), cache.NewObjectLRU(8<<20),
		filesystem.Options{LargeObjectThreshold: largeObject})
	return q, nil
}

// has reports whether the object came with the push.
func (q *quarantine) has(h plumbing.Hash) bool {
	return q != nil && q.st.HasEncodedObject(h) == nil
}

// migrate syncs the quarantined pack and index and moves them into r's
// pack directory (pack first, the index makes it visible), then syncs
// the directory. Callers hold r.writeMu.
func (q *quarantine) migrate(r *Repository) error {
	for _, p := range []string{q.pack, q.idx} {
		if err := syncFile(p); err != nil {
			return fmt.Errorf("sync %s: %w", p, err)
		}
	}
	// A small push (a daemon's write, a persona change) is read into
	// memory before its pack moves, so that the repository reads it
	// without re-reading every pack index; a large one makes go-git
	// re-read the pack directory.
	objs := q.smallObjects()
	if err := movePack(r.st.packDir, q.pack, q.idx, q.sum); err != nil {
		return err
	}
	r.st.packAdded()
	r.mu.Lock()
	if objs != nil {
		r.st.addRecent(objs)
	} else {
		r.reindex()
	}
	r.mu.Unlock()
	return nil
}

// smallPush is the largest pack migrate reads into memory.
const smallPush = 1 << 20

// smallObjects returns the quarantined pack's objects, in memory, when
// the pack is at most smallPush bytes; nil otherwise.
func (q *quarantine) smallObjects() []plumbing.EncodedObject {
	if fi, err := os.Stat(q.pack); err != nil || fi.Size() > smallPush {
		return nil
	}
	iter, err := q.st.IterEncodedObjects(plumbing.AnyObject)
	if err != nil {
		return nil
	}
	defer iter.Close()
	var out []plumbing.EncodedObject
	err = iter.ForEach(func(o plumbing.EncodedObject) error {
		if err := copyObject(&o); err != nil {
			return err
		}
		out = append(out, o)
		return nil
	})
	if err != nil {
		return nil
	}
	return out
}

func (q *quarantine) close() {
	if q == nil {
		return
	}
	if q.st != nil {
		q.st.Close()
	}
	os.RemoveAll(q.dir)
}

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

// gitEnv is the environment of a git child process: this process's
// without GIT_* variables (they could point git at another repository),
// plus extra.
func gitEnv(extra ...string) []string {
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "GIT_") {
			env = append(env, e)
		}
	}
	return append(env, extra...)
}

// limitedBuffer keeps the first n bytes written.
type limitedBuffer struct {
	b *bytes.Buffer
	n int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
