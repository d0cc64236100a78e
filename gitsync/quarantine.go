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
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/storer"
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
	// index is the pack's index, read once: whether an object came with
	// the push is a lookup in memory. Asking st instead costs a failed
	// look for a loose object on disk per object the push did not bring,
	// which is most of what a check of a long history reads.
	index *diskIndex
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
	q, err := newQuarantine(r.st.refs.commonDir)
	if err != nil {
		return nil, err
	}
	sum, err := q.indexPack(ctx, r.st.refs.commonDir, body, limit)
	if err == nil {
		err = q.adopt(sum)
	}
	if err != nil {
		q.close()
		return nil, err
	}
	return q, nil
}

// newQuarantine creates an empty quarantine in commonDir.
func newQuarantine(commonDir string) (*quarantine, error) {
	dir, err := os.MkdirTemp(commonDir, quarantinePrefix)
	if err != nil {
		if df := DiskFull(err); df != nil {
			return nil, df
		}
		return nil, fmt.Errorf("create quarantine: %w", err)
	}
	q := &quarantine{dir: dir}
	if err := os.MkdirAll(q.packDir(), 0o755); err != nil {
		q.close()
		if df := DiskFull(err); df != nil {
			return nil, df
		}
		return nil, fmt.Errorf("create quarantine: %w", err)
	}
	return q, nil
}

func (q *quarantine) packDir() string { return filepath.Join(q.dir, "objects", "pack") }

// indexPack streams body to `git index-pack` (in the repository whose
// common directory is commonDir, for the bases of a thin pack), which
// writes tmp.pack and tmp.idx in the quarantine, and returns the pack's
// checksum.
func (q *quarantine) indexPack(ctx context.Context, commonDir string, body io.Reader, limit int64) (plumbing.Hash, error) {
	var stderr, stdout bytes.Buffer
	cmd := exec.CommandContext(ctx, "git",
		// Stream large blobs instead of inflating them in memory.
		"-c", "core.bigFileThreshold=1m",
		"index-pack", "--stdin", "--fix-thin", "--strict",
		"--max-input-size="+strconv.FormatInt(limit, 10), filepath.Join(q.packDir(), "tmp.pack"))
	cmd.Dir = commonDir
	cmd.Env = gitEnv("GIT_DIR=" + commonDir)
	cmd.Stdout = &stdout
	cmd.Stderr = &limitedBuffer{b: &stderr, n: 4096}
	cmd.WaitDelay = 5 * time.Second
	in, err := cmd.StdinPipe()
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("index pack: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("index pack: start git: %w", err)
	}
	_, copyErr := io.Copy(in, body)
	in.Close()
	waitErr := cmd.Wait()
	q.indexRSS = peakRSS(cmd.ProcessState)
	if copyErr != nil && waitErr == nil {
		waitErr = copyErr
	}
	if waitErr != nil {
		return plumbing.ZeroHash, indexPackError(stderr.String(), commonDir, copyErr, waitErr, limit)
	}
	// "pack\t<sum>" on stdout.
	f := strings.Fields(stdout.String())
	if len(f) == 0 {
		return plumbing.ZeroHash, errors.New("index-pack reported no pack")
	}
	sum, ok := parseHash(f[len(f)-1])
	if !ok {
		return plumbing.ZeroHash, fmt.Errorf("index-pack reported %q", stdout.String())
	}
	return sum, nil
}

// indexPackError is why index-pack refused a pack, in one line: a full
// file system as a *DiskFullError, a pack over limit as such, otherwise
// git's own words.
func indexPackError(stderr, commonDir string, copyErr, waitErr error, limit int64) error {
	if df := gitDiskFull(stderr, commonDir); df != nil {
		return df
	}
	msg := strings.TrimSpace(stderr)
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
	return fmt.Errorf("%s", oneLine(msg))
}

// adopt names the indexed pack after its checksum and opens the
// quarantine's objects for reading.
func (q *quarantine) adopt(sum plumbing.Hash) error {
	q.sum = sum
	base := filepath.Join(q.packDir(), "pack-"+sum.String())
	q.pack, q.idx = base+".pack", base+".idx"
	if err := os.Rename(filepath.Join(q.packDir(), "tmp.pack"), q.pack); err != nil {
		return fmt.Errorf("quarantine pack: %w", err)
	}
	if err := os.Rename(filepath.Join(q.packDir(), "tmp.idx"), q.idx); err != nil {
		return fmt.Errorf("quarantine pack: %w", err)
	}
	index, err := openCheckedIndex(q.idx)
	if err != nil {
		return fmt.Errorf("quarantine pack: %w", err)
	}
	q.index = index
	q.st = filesystem.NewStorageWithOptions(osfs.New(q.dir), cache.NewObjectLRU(8<<20),
		filesystem.Options{LargeObjectThreshold: largeObject})
	return nil
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

// has reports whether the object came with the push.
func (q *quarantine) has(h plumbing.Hash) bool {
	if q == nil || q.index == nil {
		return false
	}
	return q.index.search(h) >= 0
}

// overlay reads a push's quarantined objects first and the repository's
// for everything else, so the pushed trees can be read and checked
// before anything joins the repository. It is read-only.
type overlay struct {
	repo *Repository
	q    *quarantine // nil: a push with no pack (deletions only)
}

func newOverlay(r *Repository, q *quarantine) *overlay {
	return &overlay{repo: r, q: q}
}

// pushed reports whether h came with the push.
func (o *overlay) pushed(h plumbing.Hash) bool { return o.q.has(h) }

func (o *overlay) NewEncodedObject() plumbing.EncodedObject { return &plumbing.MemoryObject{} }

func (o *overlay) SetEncodedObject(plumbing.EncodedObject) (plumbing.Hash, error) {
	return plumbing.ZeroHash, errors.New("overlay: read-only")
}

func (o *overlay) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	if o.q.has(h) {
		obj, err := o.q.st.EncodedObject(t, h)
		if err == nil {
			return obj, nil
		}
		if !errors.Is(err, plumbing.ErrObjectNotFound) {
			return nil, err
		}
	}
	var obj plumbing.EncodedObject
	// withStore re-reads the pack directory when a repack removed the
	// pack the object was in.
	err := o.repo.withStore(func(st storer.EncodedObjectStorer) error {
		var err error
		obj, err = st.EncodedObject(t, h)
		if err != nil {
			return err
		}
		// Read it now, under the storage lock: go-git's objects read
		// lazily from pack files.
		return copyObject(&obj)
	})
	return obj, err
}

// copyObject replaces *obj with an in-memory copy.
func copyObject(obj *plumbing.EncodedObject) error {
	src := *obj
	if _, ok := src.(*plumbing.MemoryObject); ok {
		return nil
	}
	mo := &plumbing.MemoryObject{}
	mo.SetType(src.Type())
	mo.SetSize(src.Size())
	r, err := src.Reader()
	if err != nil {
		return err
	}
	defer r.Close()
	w, _ := mo.Writer()
	if _, err := io.Copy(w, r); err != nil {
		return err
	}
	*obj = mo
	return nil
}

func (o *overlay) IterEncodedObjects(t plumbing.ObjectType) (storer.EncodedObjectIter, error) {
	return nil, errors.New("overlay: objects cannot be iterated")
}

func (o *overlay) HasEncodedObject(h plumbing.Hash) error {
	if o.pushed(h) {
		return nil
	}
	return o.repo.locked(func(st storer.EncodedObjectStorer) error { return st.HasEncodedObject(h) })
}

func (o *overlay) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	if o.q.has(h) {
		if n, err := o.q.st.EncodedObjectSize(h); err == nil {
			return n, nil
		}
	}
	var n int64
	err := o.repo.locked(func(st storer.EncodedObjectStorer) error {
		var err error
		n, err = st.EncodedObjectSize(h)
		return err
	})
	return n, err
}

func (o *overlay) AddAlternate(string) error { return errors.New("overlay: alternates not supported") }

// snapshot returns commit h's tree as seen through the overlay.
func (o *overlay) snapshot(h plumbing.Hash) (*Snapshot, error) {
	return newSnapshot(o, h)
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
	// A small push (a daemon's write, a persona change) is added to the
	// packs read with the index read here, without listing the pack
	// directory; a large one has it listed again (its index is mapped,
	// not read).
	idx := q.smallIndex()
	if err := movePack(r.st.packDir, q.pack, q.idx, q.sum); err != nil {
		return err
	}
	r.st.packAdded()
	r.mu.Lock()
	if idx == nil || r.st.disk.add(q.sum, idx) != nil {
		r.reindex()
	}
	r.mu.Unlock()
	return nil
}

// smallPush is the largest pack whose index migrate reads.
const smallPush = 1 << 20

// smallIndex returns the quarantined pack's index file when the pack is
// at most smallPush bytes; nil otherwise.
func (q *quarantine) smallIndex() []byte {
	if fi, err := os.Stat(q.pack); err != nil || fi.Size() > smallPush {
		return nil
	}
	b, err := os.ReadFile(q.idx)
	if err != nil {
		return nil
	}
	return b
}
