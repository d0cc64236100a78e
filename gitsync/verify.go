package gitsync

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// ErrDamaged is matched by a *DamageError.
var ErrDamaged = errors.New("repository damaged")

// DamageError is what Verify found damaged in a repository.
type DamageError struct {
	Repo   string // the repository's path
	Faults []Fault
}

// maxFaultsShown is how many faults an error message lists.
const maxFaultsShown = 3

func (e *DamageError) Error() string {
	var parts []string
	for i, f := range e.Faults {
		if i == maxFaultsShown {
			parts = append(parts, fmt.Sprintf("and %d more", len(e.Faults)-i))
			break
		}
		parts = append(parts, f.String())
	}
	return fmt.Sprintf("repository %s is damaged: %s", e.Repo, strings.Join(parts, "; "))
}

// Is makes a DamageError match ErrDamaged.
func (e *DamageError) Is(target error) bool { return target == ErrDamaged }

// Fault is one thing Verify found damaged: a file (a pack, its index,
// packed-refs, a ref) or an object a served branch needs.
type Fault struct {
	// File is the damaged file, relative to the repository
	// ("objects/pack/pack-<sum>.pack", "packed-refs", "refs/heads/x");
	// for an object, the file that holds it ("" when none does).
	File string
	// Line is the line of File that is broken (packed-refs), or 0.
	Line int
	// Ref is the broken ref, or the branch whose history or tree
	// holds the object.
	Ref string
	// Path is where the object is in that branch's tree: "concierge"
	// (a directory), "concierge/agent.yaml", "." for the root; "" for
	// a commit and for a damaged file.
	Path string
	// Object is the object that cannot be read (zero for a damaged
	// file or ref); Type is its type as its tree or commit names it.
	Object plumbing.Hash
	Type   plumbing.ObjectType
	// Reason says what is wrong.
	Reason string
}

func (f Fault) String() string {
	where := f.File
	if f.Line > 0 {
		where = fmt.Sprintf("%s line %d", f.File, f.Line)
	}
	if f.Object.IsZero() {
		return fmt.Sprintf("%s: %s", where, f.Reason)
	}
	what := fmt.Sprintf("%s %s", f.Type, f.Object.String()[:12])
	switch {
	case f.Path == ".":
		what = fmt.Sprintf("the root directory (%s)", what)
	case f.Type == plumbing.TreeObject:
		what = fmt.Sprintf("%s/ (%s)", f.Path, what)
	case f.Path != "":
		what = fmt.Sprintf("%s (%s)", f.Path, what)
	}
	if where == "" {
		return fmt.Sprintf("%s in %s is missing: %s", what, f.Ref, f.Reason)
	}
	return fmt.Sprintf("%s in %s cannot be read from %s: %s", what, f.Ref, where, f.Reason)
}

// VerifyOptions says how much Verify reads.
type VerifyOptions struct {
	// Full reads every pack whole and every object of every branch and
	// tag through all its history (quire doctor). Otherwise Verify reads
	// the trees of the served branches' tips (main, live, master, and
	// the upstream's, as a mirror names them), skipping the trees an
	// earlier Verify of this Repository read whole, and checks the packs
	// that changed since it checked them.
	Full bool
}

// verifyState is what Verify remembers between checks of a repository.
type verifyState struct {
	mu     sync.Mutex                  // one check at a time
	packs  map[string]packStamp        // packs found good, by base name
	trees  map[plumbing.Hash]bool      // trees the last check read whole
	damage atomic.Pointer[DamageError] // the last check's finding
	// copyOf marks a repository a damaged mirror is fetched into
	// again: its fetch does not check or repair it (see checkFetched).
	copyOf     *Repository
	lastRepair time.Time
}

type packStamp struct {
	size int64
	mod  time.Time
}

// servedRefs are the branches Verify reads the trees of when not Full.
var servedRefs = []plumbing.ReferenceName{LiveRef, MainRef, "refs/heads/master",
	"refs/remotes/upstream/live", "refs/remotes/upstream/main", "refs/remotes/upstream/master"}

// Verify checks the repository: its refs (loose and packed) are
// readable, its packs are whole (the checksum of each matches its
// content and its index, no object lies past its end), and the objects
// of its branches can be read and hash to their names. It returns a
// *DamageError naming every damaged file and object, nil when there is
// none, or ctx's error; the finding stays available from Damage.
//
// A check takes none of the locks reads, commits and pushes take: they
// go on meanwhile. Repacks wait.
func (r *Repository) Verify(ctx context.Context, opts VerifyOptions) error {
	r.ver.mu.Lock()
	defer r.ver.mu.Unlock()
	// No repack of this process deletes a pack during the check.
	r.repackMu.Lock()
	defer r.repackMu.Unlock()
	// Objects are read through storage of the check's own: from disk,
	// not from the repository's caches (nor into them).
	st := newObjectReader(osfs.New(r.st.refs.commonDir), r.st.packDir, 4<<20)
	defer st.Close()
	v := &verifyRun{r: r, st: st, ctx: ctx, full: opts.Full, idx: map[string]*diskIndex{},
		seen: map[plumbing.Hash]bool{}, whole: map[plumbing.Hash]bool{}}
	if !opts.Full {
		v.known = r.ver.trees
	}
	refs := v.refFaults()
	v.packFaults()
	v.objectFaults(refs)
	if err := ctx.Err(); err != nil {
		return err
	}
	if !opts.Full {
		r.ver.trees = v.whole
	}
	var d *DamageError
	if len(v.faults) > 0 {
		d = &DamageError{Repo: r.path, Faults: v.faults}
	}
	r.ver.damage.Store(d)
	if d == nil {
		return nil
	}
	return d
}

// Damage is what the last Verify found damaged, or nil.
func (r *Repository) Damage() *DamageError { return r.ver.damage.Load() }

// verifyRun is one Verify.
type verifyRun struct {
	r      *Repository
	st     *gitStorage
	ctx    context.Context
	full   bool
	faults []Fault
	// idx holds the pack indexes read during the run, by base name.
	idx map[string]*diskIndex
	// seen: objects read in this run (true: good); whole: trees read
	// whole in this run; known: trees an earlier run read whole.
	seen, whole, known map[plumbing.Hash]bool
}

func (v *verifyRun) rel(p string) string {
	if rel, err := filepath.Rel(v.r.st.refs.commonDir, p); err == nil {
		return filepath.ToSlash(rel)
	}
	return p
}

// refFaults adds the broken refs, loose and packed, and returns the refs
// that can be read (none when the refs cannot be listed).
func (v *verifyRun) refFaults() []*plumbing.Reference {
	refs, broken, err := v.r.st.refs.list()
	if err != nil {
		v.faults = append(v.faults, Fault{File: "refs", Reason: err.Error()})
		refs = nil
	}
	if _, err := v.r.st.refs.read(plumbing.HEAD); err != nil && !errors.Is(err, plumbing.ErrReferenceNotFound) {
		broken = append([]error{err}, broken...)
	}
	for _, err := range broken {
		var br *BrokenRefError
		if !errors.As(err, &br) {
			v.faults = append(v.faults, Fault{File: "refs", Reason: err.Error()})
			continue
		}
		reason := br.Reason
		if br.Line > 0 && br.Name != "" {
			reason = fmt.Sprintf("ref %s: %s", br.Name, br.Reason)
		}
		v.faults = append(v.faults, Fault{File: v.rel(br.File), Line: br.Line, Ref: string(br.Name), Reason: reason})
	}
	return refs
}

// packFaults adds the packs that are not whole; packs found good before
// and not changed since are skipped unless the run is full.
func (v *verifyRun) packFaults() {
	dir := v.r.st.packDir
	bases, err := listPacks(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		v.faults = append(v.faults, Fault{File: "objects/pack", Reason: err.Error()})
		return
	}
	good := map[string]packStamp{}
	for _, base := range bases {
		if v.ctx.Err() != nil {
			return
		}
		fi, err := os.Stat(filepath.Join(dir, base+".pack"))
		if err != nil {
			continue // deleted by a repack meanwhile
		}
		stamp := packStamp{fi.Size(), fi.ModTime()}
		if !v.full && v.r.ver.packs[base] == stamp {
			good[base] = stamp
			continue
		}
		idx, file, err := checkPack(dir, base)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if idx != nil {
			v.idx[base] = idx
		}
		if err != nil {
			v.faults = append(v.faults, Fault{File: "objects/pack/" + file, Reason: err.Error()})
			continue
		}
		good[base] = stamp
	}
	if !v.full {
		v.r.ver.packs = good
	}
}

// checkPack checks the pack base in dir against its index and its own
// checksum. It returns the index (when it could be read) and, with an
// error, the damaged file's name.
func checkPack(dir, base string) (*diskIndex, string, error) {
	idx, err := openCheckedIndex(filepath.Join(dir, base+".idx"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, "", err
		}
		return nil, base + ".idx", fmt.Errorf("its index cannot be read: %w", err)
	}
	name := base + ".pack"
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return idx, "", err
		}
		return idx, name, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return idx, name, err
	}
	size := fi.Size()
	var head [12]byte
	if _, err := io.ReadFull(f, head[:]); err != nil || !bytes.Equal(head[:4], []byte("PACK")) {
		return idx, name, fmt.Errorf("it is not a pack (%d bytes)", size)
	}
	if n := int(uint32(head[8])<<24 | uint32(head[9])<<16 | uint32(head[10])<<8 | uint32(head[11])); n != idx.n {
		return idx, name, fmt.Errorf("it says it holds %d objects, its index names %d", n, idx.n)
	}
	last, err := idx.lastOffset()
	if err != nil {
		return idx, base + ".idx", fmt.Errorf("its index cannot be read: %w", err)
	}
	if size < 12+20 || last >= size-20 {
		return idx, name, fmt.Errorf("it is truncated: %d bytes, and its index names an object at byte %d", size, last)
	}
	var trailer [20]byte
	if _, err := f.ReadAt(trailer[:], size-20); err != nil {
		return idx, name, err
	}
	if plumbing.Hash(trailer) != idx.packChecksum() {
		return idx, name, fmt.Errorf("it ends with checksum %s, its index expects %s: it was cut short or overwritten", plumbing.Hash(trailer), idx.packChecksum())
	}
	h := sha1.New()
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return idx, name, err
	}
	if _, err := io.Copy(h, io.LimitReader(bufio.NewReaderSize(f, 1<<16), size-20)); err != nil {
		return idx, name, err
	}
	if !bytes.Equal(h.Sum(nil), trailer[:]) {
		return idx, name, errors.New("its content does not match its checksum: bytes changed on disk")
	}
	return idx, "", nil
}

// objectFaults adds the objects of the branches that cannot be read; a
// full run reads every ref of refs (refFaults' listing).
func (v *verifyRun) objectFaults(refs []*plumbing.Reference) {
	var tips []*plumbing.Reference
	if v.full {
		// A fetch's staging refs name what the branches name.
		tips = slices.DeleteFunc(refs, func(ref *plumbing.Reference) bool {
			return strings.HasPrefix(ref.Name().String(), stagingPrefix)
		})
	} else {
		for _, n := range servedRefs {
			if ref, err := v.r.st.refs.read(n); err == nil && ref.Type() == plumbing.HashReference {
				tips = append(tips, ref)
			}
		}
	}
	for _, ref := range tips {
		if v.ctx.Err() != nil {
			return
		}
		v.tip(ref.Name().String(), ref.Hash())
	}
}

// tip reads what ref names: a tag's target, a commit's tree and, in a
// full run, its history.
func (v *verifyRun) tip(ref string, h plumbing.Hash) {
	o, ok := v.read(ref, "", h, plumbing.AnyObject)
	for ok && o.Type() == plumbing.TagObject {
		var tag object.Tag
		if err := tag.Decode(o); err != nil {
			v.fault(ref, "", h, plumbing.TagObject, err)
			return
		}
		h = tag.Target
		o, ok = v.read(ref, "", h, tag.TargetType)
	}
	if !ok || o.Type() != plumbing.CommitObject {
		return
	}
	queue := []plumbing.EncodedObject{o}
	for len(queue) > 0 && v.ctx.Err() == nil {
		o := queue[0]
		queue = queue[1:]
		var c object.Commit
		if err := c.Decode(o); err != nil {
			v.fault(ref, "", o.Hash(), plumbing.CommitObject, err)
			continue
		}
		v.tree(ref, ".", c.TreeHash)
		if !v.full {
			return
		}
		for _, p := range c.ParentHashes {
			if _, done := v.seen[p]; done {
				continue
			}
			if po, ok := v.read(ref, "", p, plumbing.CommitObject); ok {
				queue = append(queue, po)
			}
		}
	}
}

// tree reads the tree h at p and everything in it; it reports whether
// all of it was read.
func (v *verifyRun) tree(ref, p string, h plumbing.Hash) bool {
	if ok, done := v.seen[h]; done {
		return ok && v.whole[h]
	}
	if v.known[h] {
		v.seen[h], v.whole[h] = true, true
		return true
	}
	o, ok := v.read(ref, p, h, plumbing.TreeObject)
	if !ok {
		return false
	}
	var t object.Tree
	if err := t.Decode(o); err != nil {
		v.seen[h] = false
		v.fault(ref, p, h, plumbing.TreeObject, err)
		return false
	}
	all := true
	for _, e := range t.Entries {
		if v.ctx.Err() != nil {
			return false
		}
		ep := path.Join(p, e.Name)
		switch e.Mode {
		case filemode.Dir:
			all = v.tree(ref, ep, e.Hash) && all
		case filemode.Submodule:
		default:
			if ok, done := v.seen[e.Hash]; done {
				all = all && ok
				continue
			}
			_, ok := v.read(ref, ep, e.Hash, plumbing.BlobObject)
			all = all && ok
		}
	}
	if all {
		v.whole[h] = true
	}
	return all
}

// read reads object h (want: its type, or AnyObject) through the
// repository's storage, checking that its content hashes to h; a
// failure is a fault at path p of ref.
func (v *verifyRun) read(ref, p string, h plumbing.Hash, want plumbing.ObjectType) (plumbing.EncodedObject, bool) {
	o, err := v.load(h)
	if err != nil && isMissing(err) {
		// A pack added since the check listed them (a commit's).
		v.st.reindex()
		o, err = v.load(h)
	}
	if err == nil && want != plumbing.AnyObject && o.Type() != want {
		err = fmt.Errorf("it is a %s", o.Type())
	}
	v.seen[h] = err == nil
	if err != nil {
		if want == plumbing.AnyObject {
			want = plumbing.CommitObject
		}
		v.fault(ref, p, h, want, err)
		return nil, false
	}
	return o, true
}

// load reads object h whole from the check's storage and checks that
// its content hashes to h.
func (v *verifyRun) load(h plumbing.Hash) (o *plumbing.MemoryObject, err error) {
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("go-git failed on it: %v", x)
		}
	}()
	eo, err := v.st.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return nil, err
	}
	rd, err := eo.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	content, err := io.ReadAll(rd)
	if err != nil {
		return nil, err
	}
	if int64(len(content)) != eo.Size() || plumbing.ComputeHash(eo.Type(), content) != h {
		return nil, errors.New("its content does not hash to its name")
	}
	o = &plumbing.MemoryObject{}
	o.SetType(eo.Type())
	o.Write(content)
	return o, nil
}

// fault adds that object h at p of ref cannot be read, naming the file
// that holds it.
func (v *verifyRun) fault(ref, p string, h plumbing.Hash, t plumbing.ObjectType, err error) {
	reason := err.Error()
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		reason = "no pack or loose object holds it"
	}
	if t == plumbing.CommitObject {
		p = ""
	}
	v.faults = append(v.faults, Fault{File: v.locate(h), Ref: ref, Path: p, Object: h, Type: t, Reason: reason})
}

// locate names the file that holds object h: its loose file, or the
// pack whose index names it; "" when none does.
func (v *verifyRun) locate(h plumbing.Hash) string {
	hex := h.String()
	loose := filepath.Join("objects", hex[:2], hex[2:])
	if _, err := os.Stat(filepath.Join(v.r.st.refs.commonDir, loose)); err == nil {
		return filepath.ToSlash(loose)
	}
	bases, _ := listPacks(v.r.st.packDir)
	for _, base := range bases {
		idx, ok := v.idx[base]
		if !ok {
			idx, _ = openCheckedIndex(filepath.Join(v.r.st.packDir, base+".idx"))
			v.idx[base] = idx
		}
		if idx != nil && idx.search(h) >= 0 {
			return "objects/pack/" + base + ".pack"
		}
	}
	return ""
}

// maxFaultsLogged bounds the lines LogTo writes for one check.
const maxFaultsLogged = 20

// LogTo logs each fault of e at ERROR ("repository is damaged"), with
// attrs (which name the repository for the reader) and repair, which
// says what to do; past maxFaultsLogged faults, one line says how many
// more there are.
func (e *DamageError) LogTo(log *slog.Logger, repair string, attrs ...any) {
	for i, f := range e.Faults {
		if i == maxFaultsLogged {
			log.Error("repository is damaged", append(slices.Clip(attrs), "more_faults", len(e.Faults)-i, "repair", repair)...)
			return
		}
		a := append(slices.Clip(attrs), "file", f.File)
		if f.Line > 0 {
			a = append(a, "line", f.Line)
		}
		if f.Ref != "" {
			a = append(a, "ref", f.Ref)
		}
		if !f.Object.IsZero() {
			a = append(a, "object", f.Object.String(), "type", f.Type.String())
		}
		if f.Path != "" {
			a = append(a, "path", f.Path)
		}
		log.Error("repository is damaged", append(a, "reason", f.Reason, "repair", repair)...)
	}
}
