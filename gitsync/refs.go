package gitsync

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/quirehq/quire/internal/replace"
)

// ErrBrokenRef is matched by a *BrokenRefError.
var ErrBrokenRef = errors.New("broken ref")

// BrokenRefError is a ref whose file is empty or does not hold a ref
// (left by a crash of an older version, or damaged on disk), or a line
// of packed-refs that is not one: git then reads no ref of that file
// (every clone and fetch fails), so it is damage all the same.
type BrokenRefError struct {
	// Name is the ref; "" for a packed-refs line that names none.
	Name plumbing.ReferenceName
	File string
	// Line is the line of packed-refs (1-based); 0 for a loose ref.
	Line   int
	Reason string
}

func (e *BrokenRefError) Error() string {
	switch {
	case e.Line == 0:
		return fmt.Sprintf("ref %s is broken (%s, in %s): restore it from a backup or push it again", e.Name, e.Reason, e.File)
	case e.Name == "":
		return fmt.Sprintf("line %d of %s is broken (%s): delete that line (git reads no ref of the file while it is there)", e.Line, e.File, e.Reason)
	default:
		return fmt.Sprintf("ref %s is broken (line %d of %s: %s): delete that line (git reads no ref of the file while it is there), then push the ref again", e.Name, e.Line, e.File, e.Reason)
	}
}

// Is makes a BrokenRefError match ErrBrokenRef.
func (e *BrokenRefError) Is(target error) bool { return target == ErrBrokenRef }

// refStore reads and writes refs the way git does: a ref moves by writing
// "<ref>.lock" (created exclusively, so it also excludes a concurrent git),
// syncing it, renaming it over the ref and syncing the directory. A crash
// leaves either the old or the new value, never an empty file; readers
// (the daemon, git clone of the directory, backups) never see a missing
// ref.
type refStore struct {
	gitDir    string // HEAD
	commonDir string // refs/, packed-refs
}

// lockWait is how long a writer waits for another's lock; a lock file
// older than staleLock is left by a crash and is removed.
const (
	lockWait  = 3 * time.Second
	staleLock = 2 * time.Second
)

func (rs *refStore) dir(name plumbing.ReferenceName) string {
	if name == plumbing.HEAD {
		return rs.gitDir
	}
	return rs.commonDir
}

func (rs *refStore) file(name plumbing.ReferenceName) string {
	return filepath.Join(rs.dir(name), filepath.FromSlash(string(name)))
}

// parseRef parses the content of a loose ref file.
func parseRef(name plumbing.ReferenceName, file string, b []byte) (*plumbing.Reference, error) {
	s := strings.TrimRight(string(b), "\n\r ")
	if s == "" {
		return nil, &BrokenRefError{Name: name, File: file, Reason: "empty file"}
	}
	if t, ok := strings.CutPrefix(s, "ref: "); ok {
		if !strings.HasPrefix(t, "refs/") || strings.ContainsAny(t, " \n") {
			return nil, &BrokenRefError{Name: name, File: file, Reason: fmt.Sprintf("bad symbolic target %q", t)}
		}
		return plumbing.NewSymbolicReference(name, plumbing.ReferenceName(t)), nil
	}
	h, ok := parseHash(s)
	if !ok || h.IsZero() {
		if len(s) > 60 {
			s = s[:60] + "…"
		}
		return nil, &BrokenRefError{Name: name, File: file, Reason: fmt.Sprintf("not a commit id: %q", s)}
	}
	return plumbing.NewHashReference(name, h), nil
}

// read returns the ref name: the loose file, else its packed-refs entry.
// A missing ref is plumbing.ErrReferenceNotFound; a damaged one a
// *BrokenRefError.
func (rs *refStore) read(name plumbing.ReferenceName) (*plumbing.Reference, error) {
	f := rs.file(name)
	b, err := readSmallFile(f)
	switch {
	case err == nil:
		return parseRef(name, f, b)
	case errors.Is(err, fs.ErrNotExist) || isNotDirErr(err):
	default:
		st, serr := os.Stat(f)
		if serr == nil && st.IsDir() {
			return nil, plumbing.ErrReferenceNotFound
		}
		return nil, fmt.Errorf("read ref %s: %w", name, err)
	}
	packed, broken, err := rs.readPacked()
	if err != nil {
		return nil, err
	}
	if h, ok := packed[name]; ok {
		return plumbing.NewHashReference(name, h), nil
	}
	for _, b := range broken {
		if b.Name == name {
			return nil, b
		}
	}
	return nil, plumbing.ErrReferenceNotFound
}

func isNotDirErr(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "not a directory")
}

// readPacked reads packed-refs (empty when there is none): the refs of
// its good lines, and a *BrokenRefError for each line git would refuse.
func (rs *refStore) readPacked() (map[plumbing.ReferenceName]plumbing.Hash, []*BrokenRefError, error) {
	file := filepath.Join(rs.commonDir, "packed-refs")
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read packed-refs: %w", err)
	}
	refs, broken := parsePacked(file, b)
	return refs, broken, nil
}

// parsePacked parses the content of packed-refs as git does: an optional
// "# pack-refs with:" header first, then "<commit id> <ref name>" lines,
// each optionally followed by a "^<commit id>" peeled line.
func parsePacked(file string, b []byte) (map[plumbing.ReferenceName]plumbing.Hash, []*BrokenRefError) {
	out := map[plumbing.ReferenceName]plumbing.Hash{}
	var broken []*BrokenRefError
	bad := func(n int, name plumbing.ReferenceName, format string, args ...any) {
		broken = append(broken, &BrokenRefError{Name: name, File: file, Line: n, Reason: fmt.Sprintf(format, args...)})
	}
	afterRef := false
	n := 0
	for line := range bytes.Lines(b) {
		n++
		s, complete := strings.CutSuffix(string(line), "\n")
		switch {
		case !complete:
			bad(n, "", "the file ends in the middle of this line: %q", shorten(s))
		case n == 1 && strings.HasPrefix(s, "# pack-refs with:"):
		case strings.HasPrefix(s, "^"):
			if _, ok := parseHash(strings.ToLower(s[1:])); !ok || !afterRef {
				bad(n, "", "not a peeled commit id after a ref: %q", shorten(s))
			}
			afterRef = false
			continue
		default:
			hs, name, ok := strings.Cut(s, " ")
			h, hok := parseHash(strings.ToLower(hs))
			ref := plumbing.ReferenceName(name)
			switch {
			case !ok || slices.Contains(strings.Split(name, "/"), ".."):
				bad(n, "", "not \"<commit id> <ref name>\": %q", shorten(s))
			case !strings.HasPrefix(name, "refs/") && (!hok || h.IsZero()):
				bad(n, "", "not \"<commit id> <ref name>\": %q", shorten(s))
			case !hok || h.IsZero():
				bad(n, ref, "not a commit id: %q", shorten(hs))
			case !validRefName(ref):
				// git ignores it, with a warning: so does this.
				afterRef = true
				continue
			default:
				out[ref] = h
				afterRef = true
				continue
			}
		}
		afterRef = false
	}
	return out, broken
}

// shorten cuts s for an error message.
func shorten(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// list returns every ref under refs/ (loose and packed; loose wins).
// Broken loose refs and broken lines of packed-refs are skipped and
// returned as errors.
func (rs *refStore) list() ([]*plumbing.Reference, []error, error) {
	seen := map[plumbing.ReferenceName]bool{}
	var refs []*plumbing.Reference
	var broken []error
	root := filepath.Join(rs.commonDir, "refs")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || strings.HasSuffix(p, ".lock") {
			return nil
		}
		rel, err := filepath.Rel(rs.commonDir, p)
		if err != nil {
			return err
		}
		name := plumbing.ReferenceName(filepath.ToSlash(rel))
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // deleted meanwhile
		}
		if err != nil {
			return fmt.Errorf("read ref %s: %w", name, err)
		}
		ref, err := parseRef(name, p, b)
		seen[name] = true
		if err != nil {
			broken = append(broken, err)
			return nil
		}
		refs = append(refs, ref)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("list refs: %w", err)
	}
	packed, brokenPacked, err := rs.readPacked()
	if err != nil {
		return nil, nil, err
	}
	for _, b := range brokenPacked {
		broken = append(broken, b)
	}
	for n, h := range packed {
		if !seen[n] {
			refs = append(refs, plumbing.NewHashReference(n, h))
		}
	}
	slices.SortFunc(refs, func(a, b *plumbing.Reference) int { return strings.Compare(a.Name().String(), b.Name().String()) })
	return refs, broken, nil
}

// check reports every broken ref (HEAD and refs/), or nil.
func (rs *refStore) check() error {
	_, broken, err := rs.list()
	if err != nil {
		return err
	}
	if _, err := rs.read(plumbing.HEAD); err != nil && !errors.Is(err, plumbing.ErrReferenceNotFound) {
		broken = append([]error{err}, broken...)
	}
	return errors.Join(broken...)
}

// lock creates path+".lock" exclusively, waiting for another writer up
// to lockWait and removing a lock left by a crash. It retries with
// backoff, as git does (core.filesRefLockTimeout): git's lock is a bare
// file whose holder signals nothing when it lets go.
func lockFile(path string) (*os.File, error) {
	lp := path + ".lock"
	deadline := time.Now().Add(lockWait)
	wait := 2 * time.Millisecond
	for {
		f, err := openFile(lp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("lock %s: %w", lp, err)
		}
		if st, serr := os.Stat(lp); serr == nil && time.Since(st.ModTime()) > staleLock {
			// Left by a process that died holding it (git holds ref
			// locks for milliseconds).
			_ = os.Remove(lp)
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("lock %s: held by another process for more than %s; remove it if no git process runs", lp, lockWait)
		}
		time.Sleep(wait)
		wait = min(wait*2, 50*time.Millisecond)
	}
}

// commitLock writes content to the open lock file f, syncs it and
// renames it over path, then syncs path's directory.
func commitLock(f *os.File, path string, content []byte) error {
	lp := f.Name()
	_, err := f.Write(content)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = replace.File(lp, path)
	}
	if err != nil {
		_ = os.Remove(lp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return syncDir(filepath.Dir(path))
}

// mkdirs creates dir and syncs the parent of every directory it created,
// up to the repository.
func (rs *refStore) mkdirs(dir string) error {
	var created []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || len(d) <= len(rs.commonDir) {
			break
		}
		created = append(created, d)
	}
	if len(created) == 0 {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, d := range created {
		if err := syncDir(filepath.Dir(d)); err != nil {
			return err
		}
	}
	return nil
}

// expectation of a ref update: nil (no check), a pointer to the zero hash
// (the ref must not exist; a broken ref counts as absent, so a push can
// replace it) or the hash the ref must have.
type expectation = *plumbing.Hash

// update sets name to ref (nil deletes it) if it matches exp, holding the
// ref's lock from the check to the rename.
func (rs *refStore) update(name plumbing.ReferenceName, ref *plumbing.Reference, exp expectation) error {
	if name != plumbing.HEAD && !validRefName(name) {
		return fmt.Errorf("update ref %q: invalid ref name", name)
	}
	path := rs.file(name)
	if err := rs.mkdirs(filepath.Dir(path)); err != nil {
		return fmt.Errorf("update ref %s: %w", name, err)
	}
	f, err := lockFile(path)
	if err != nil {
		return fmt.Errorf("update ref %s: %w", name, err)
	}
	unlock := func() { f.Close(); os.Remove(f.Name()) }
	cur, err := rs.read(name)
	var have plumbing.Hash
	switch {
	case err == nil:
		have = cur.Hash()
	case errors.Is(err, plumbing.ErrReferenceNotFound), errors.Is(err, ErrBrokenRef) && exp != nil && exp.IsZero():
	default:
		unlock()
		return fmt.Errorf("update ref %s: %w", name, err)
	}
	if exp != nil && have != *exp {
		unlock()
		return fmt.Errorf("%w: %s is at %s, expected %s", ErrStale, name, have, *exp)
	}
	if ref == nil {
		err := rs.remove(name, path)
		unlock()
		return err
	}
	var content string
	if ref.Type() == plumbing.SymbolicReference {
		content = "ref: " + ref.Target().String() + "\n"
	} else {
		content = ref.Hash().String() + "\n"
	}
	if err := commitLock(f, path, []byte(content)); err != nil {
		return fmt.Errorf("update ref %s: %w", name, err)
	}
	return nil
}

// remove deletes a ref under its lock: first from packed-refs (rewritten
// under packed-refs.lock), then the loose file, as git does.
func (rs *refStore) remove(name plumbing.ReferenceName, path string) error {
	pp := filepath.Join(rs.commonDir, "packed-refs")
	b, err := os.ReadFile(pp)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete ref %s: %w", name, err)
	}
	if err == nil {
		if kept, found := withoutPacked(b, name); found {
			pf, err := lockFile(pp)
			if err != nil {
				return fmt.Errorf("delete ref %s: %w", name, err)
			}
			// Re-read under the lock: another git may have rewritten it.
			if b, err = os.ReadFile(pp); err != nil {
				pf.Close()
				os.Remove(pf.Name())
				return fmt.Errorf("delete ref %s: %w", name, err)
			}
			kept, _ = withoutPacked(b, name)
			if err := commitLock(pf, pp, kept); err != nil {
				return fmt.Errorf("delete ref %s: %w", name, err)
			}
		}
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete ref %s: %w", name, err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("delete ref %s: %w", name, err)
	}
	// Remove directories left empty (refs/heads/proposals/a/), so that a
	// ref of that name can be created later.
	refs := filepath.Join(rs.commonDir, "refs")
	for d := filepath.Dir(path); len(d) > len(refs)+len("/heads"); d = filepath.Dir(d) {
		if os.Remove(d) != nil {
			break
		}
	}
	return nil
}

// withoutPacked returns packed-refs content b without name (and its
// peeled line), and whether name was in it.
func withoutPacked(b []byte, name plumbing.ReferenceName) ([]byte, bool) {
	var out []byte
	found, skipPeel := false, false
	for line := range bytes.Lines(b) {
		t := bytes.TrimRight(line, "\n")
		if skipPeel && bytes.HasPrefix(t, []byte("^")) {
			skipPeel = false
			continue
		}
		skipPeel = false
		if _, n, ok := bytes.Cut(t, []byte(" ")); ok && len(t) > 0 && t[0] != '#' && t[0] != '^' && string(n) == string(name) {
			found, skipPeel = true, true
			continue
		}
		out = append(out, line...)
	}
	return out, found
}
