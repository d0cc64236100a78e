package gitsync

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/quirehq/quire/internal/testenv"
)

// deltaRepo makes a work-tree repository whose history git packs with
// deltas: versions of a growing file, a blob larger than go-git reads
// at once, and many small files. It returns the repository.
func deltaRepo(t testing.TB) string {
	t.Helper()
	dir := newWorkRepo(t, map[string]string{"a.md": "first\n"})
	rng := rand.New(rand.NewPCG(1, 2))
	var doc strings.Builder
	for i := range 30 {
		fmt.Fprintf(&doc, "line %d: %s\n", i, randomWords(rng, 12))
		files := map[string]string{"doc.md": doc.String(), fmt.Sprintf("n/%d.md", i): randomWords(rng, 5)}
		if i%10 == 0 {
			files["big.md"] = strings.Repeat(doc.String(), 40) // > 16 KiB
		}
		writeFiles(t, dir, files)
		git(t, dir, "add", "-A")
		git(t, dir, "commit", "-q", "-m", fmt.Sprintf("c%d", i))
	}
	return dir
}

func randomWords(rng *rand.Rand, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = fmt.Sprintf("w%d", rng.IntN(5000))
	}
	return strings.Join(w, " ")
}

// TestDiskIndexAnswersAsGoGit: on a pack git wrote (with deltas), every
// lookup of the in-place index answers as go-git's MemoryIndex of the
// same file, misses included.
func TestDiskIndexAnswersAsGoGit(t *testing.T) {
	t.Parallel()
	dir := deltaRepo(t)
	git(t, dir, "repack", "-adq")
	idxs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.idx"))
	if len(idxs) != 1 {
		t.Fatalf("pack indexes: %v", idxs)
	}
	x, err := openDiskIndex(idxs[0])
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(idxs[0])
	if err != nil {
		t.Fatal(err)
	}
	sameAnswers(t, x, b)
}

// TestDiskIndexLargeOffsets: offsets past 2 GiB (in the index's table of
// 8-byte offsets) are found both ways.
func TestDiskIndexLargeOffsets(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	w := new(idxfile.Writer)
	const n = 3000
	w.OnHeader(n)
	off := int64(12)
	for range n {
		var h plumbing.Hash
		for i := range h {
			h[i] = byte(rng.IntN(256))
		}
		w.OnInflatedObjectContent(h, off, rng.Uint32(), nil)
		off += 1 + rng.Int64N(3<<20) // past 4 GiB by the end
	}
	if err := w.OnFooter(plumbing.NewHash("0123456789012345678901234567890123456789")); err != nil {
		t.Fatal(err)
	}
	mi, err := w.Index()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := idxfile.NewEncoder(&buf).Encode(mi); err != nil {
		t.Fatal(err)
	}
	x, err := newDiskIndex(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(x.large) == 0 {
		t.Fatal("no 8-byte offsets in the index")
	}
	sameAnswers(t, x, buf.Bytes())
	x.compact()
	sameAnswers(t, x, buf.Bytes())
}

// TestDiskIndexCompact: a small index kept without its fan-out table
// answers as go-git's.
func TestDiskIndexCompact(t *testing.T) {
	t.Parallel()
	dir := newWorkRepo(t, map[string]string{"a.md": "a\n", "b/c.md": "c\n", "b/d.md": "d\n"})
	git(t, dir, "repack", "-adq")
	idxs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.idx"))
	x, err := openDiskIndex(idxs[0])
	if err != nil {
		t.Fatal(err)
	}
	if x.fanout != nil {
		t.Fatalf("an index of %d objects is not compact", x.n)
	}
	b, err := os.ReadFile(idxs[0])
	if err != nil {
		t.Fatal(err)
	}
	sameAnswers(t, x, b)
}

// sameAnswers checks every lookup of x against go-git's MemoryIndex of
// the index file b.
func sameAnswers(t *testing.T, x *diskIndex, b []byte) {
	t.Helper()
	mi := idxfile.NewMemoryIndex()
	if err := idxfile.NewDecoder(bytes.NewReader(b)).Decode(mi); err != nil {
		t.Fatal(err)
	}
	if x.packChecksum() != plumbing.Hash(mi.PackfileChecksum) {
		t.Errorf("pack checksum %s, go-git %x", x.packChecksum(), mi.PackfileChecksum)
	}
	want, _ := mi.Count()
	if n, _ := x.Count(); n != want || want == 0 {
		t.Fatalf("count %d, go-git %d", n, want)
	}
	sameEntries(t, "by name", x.Entries, mi.Entries)
	sameEntries(t, "by offset", x.EntriesByOffset, mi.EntriesByOffset)
	it, _ := mi.Entries()
	defer it.Close()
	for {
		e, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ok, _ := x.Contains(e.Hash); !ok {
			t.Errorf("%s: not contained", e.Hash)
		}
		if o, err := x.FindOffset(e.Hash); err != nil || o != int64(e.Offset) {
			t.Errorf("%s: offset %d, %v; go-git %d", e.Hash, o, err, e.Offset)
		}
		if c, err := x.FindCRC32(e.Hash); err != nil || c != e.CRC32 {
			t.Errorf("%s: crc %x, %v; go-git %x", e.Hash, c, err, e.CRC32)
		}
		if h, err := x.FindHash(int64(e.Offset)); err != nil || h != e.Hash {
			t.Errorf("offset %d: %s, %v; go-git %s", e.Offset, h, err, e.Hash)
		}
		miss := e.Hash
		miss[19] ^= 1
		if _, err := mi.FindOffset(miss); err == nil {
			continue // a neighbour by chance
		}
		if ok, _ := x.Contains(miss); ok {
			t.Errorf("%s: contained, go-git says not", miss)
		}
		if _, err := x.FindOffset(miss); !errors.Is(err, plumbing.ErrObjectNotFound) {
			t.Errorf("%s: FindOffset %v, not ErrObjectNotFound", miss, err)
		}
		if _, err := x.FindHash(int64(e.Offset) + 1); err == nil {
			if _, merr := mi.FindHash(int64(e.Offset) + 1); merr != nil {
				t.Errorf("offset %d: found, go-git says not", e.Offset+1)
			}
		}
	}
	for _, o := range []int64{0, 1, 11, 1 << 40} {
		if h, err := x.FindHash(o); !errors.Is(err, plumbing.ErrObjectNotFound) {
			t.Errorf("offset %d: %s, %v; want ErrObjectNotFound", o, h, err)
		}
	}
}

func sameEntries(t *testing.T, order string, got, want func() (idxfile.EntryIter, error)) {
	t.Helper()
	gi, err := got()
	if err != nil {
		t.Fatal(err)
	}
	defer gi.Close()
	wi, err := want()
	if err != nil {
		t.Fatal(err)
	}
	defer wi.Close()
	for n := 0; ; n++ {
		g, gerr := gi.Next()
		w, werr := wi.Next()
		if gerr != nil || werr != nil {
			if gerr != werr {
				t.Fatalf("entries %s, #%d: %v, go-git %v", order, n, gerr, werr)
			}
			return
		}
		if *g != *w {
			t.Fatalf("entries %s, #%d: %+v, go-git %+v", order, n, *g, *w)
		}
	}
}

// TestDiskIndexRefusesMalformed: an index that is cut short, of another
// version or whose fan-out decreases is refused, not read out of bounds.
func TestDiskIndexRefusesMalformed(t *testing.T) {
	t.Parallel()
	dir := deltaRepo(t)
	git(t, dir, "repack", "-adq")
	idxs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.idx"))
	b, err := os.ReadFile(idxs[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newDiskIndex(b); err != nil {
		t.Fatalf("the whole index: %v", err)
	}
	cut := b[:len(b)-41]
	version := bytes.Clone(b)
	version[7] = 3
	fanout := bytes.Clone(b)
	copy(fanout[8+100*4:], []byte{0xff, 0xff, 0xff, 0xff})
	for name, bad := range map[string][]byte{"cut short": cut, "version 3": version, "fan-out": fanout, "empty": nil} {
		if _, err := newDiskIndex(bad); !errors.Is(err, errIdxFormat) {
			t.Errorf("%s: %v, want errIdxFormat", name, err)
		}
	}
	// A name changed in place keeps the layout: only the checksum tells.
	flipped := bytes.Clone(b)
	flipped[idxHeader+5] ^= 1
	p := filepath.Join(t.TempDir(), "flipped.idx")
	if err := os.WriteFile(p, flipped, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := openDiskIndex(p); err != nil {
		t.Errorf("openDiskIndex: %v", err)
	}
	if _, err := openCheckedIndex(p); err == nil {
		t.Error("openCheckedIndex took an index whose checksum does not match")
	}
}

// TestPackReadsMatchGit: every object of packs git wrote with deltas
// (offset deltas, then deltas naming their base) reads through a
// Repository as git cat-file reads it: type, size and content, large
// blobs included.
func TestPackReadsMatchGit(t *testing.T) {
	t.Parallel()
	for _, ofs := range []string{"true", "false"} {
		t.Run("useDeltaBaseOffset="+ofs, func(t *testing.T) {
			t.Parallel()
			dir := deltaRepo(t)
			git(t, dir, "-c", "repack.useDeltaBaseOffset="+ofs, "repack", "-adq")
			idxs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.idx"))
			if v := git(t, dir, "verify-pack", "-v", idxs[0]); !strings.Contains(v, "chain length = 2") {
				t.Fatalf("no delta chains in the pack:\n%s", v)
			}
			r, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			head := git(t, dir, "rev-parse", "HEAD")
			if h, err := r.Resolve(head[:9]); err != nil || h.String() != head {
				t.Errorf("Resolve(%s): %s, %v; git %s", head[:9], h, err, head)
			}
			want := catAllObjects(t, dir)
			r.mu.Lock()
			defer r.mu.Unlock()
			large := 0
			for h, w := range want {
				if n, err := r.st.EncodedObjectSize(h); err != nil || n != int64(len(w.content)) {
					t.Errorf("%s: size %d, %v; git %d", h, n, err, len(w.content))
				}
				o, err := r.st.EncodedObject(plumbing.AnyObject, h)
				if err != nil {
					t.Errorf("%s: %v", h, err)
					continue
				}
				if o.Type().String() != w.typ {
					t.Errorf("%s: type %s, git %s", h, o.Type(), w.typ)
				}
				if len(w.content) > 16<<10 {
					large++
				}
				rd, err := o.Reader()
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(rd)
				rd.Close()
				if err != nil || !bytes.Equal(got, w.content) {
					t.Errorf("%s: %d bytes, %v; git %d bytes", h, len(got), err, len(w.content))
				}
			}
			if large == 0 {
				t.Error("no object larger than 16 KiB")
			}
			iterated := map[plumbing.Hash]bool{}
			it, err := r.st.IterEncodedObjects(plumbing.CommitObject)
			if err != nil {
				t.Fatal(err)
			}
			if err := it.ForEach(func(o plumbing.EncodedObject) error {
				iterated[o.Hash()] = true
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			for h, w := range want {
				if (w.typ == "commit") != iterated[h] {
					t.Errorf("%s (%s): iterated as a commit: %v", h, w.typ, iterated[h])
				}
			}
			missing := plumbing.NewHash("00000000000000000000000000000000000000ff")
			if err := r.st.HasEncodedObject(missing); !errors.Is(err, plumbing.ErrObjectNotFound) {
				t.Errorf("a missing object: %v", err)
			}
		})
	}
}

type gitObject struct {
	typ     string
	content []byte
}

// catAllObjects reads every object of the repository at dir with git
// cat-file --batch.
func catAllObjects(t *testing.T, dir string) map[plumbing.Hash]gitObject {
	t.Helper()
	cmd := exec.Command("git", "cat-file", "--batch-all-objects", "--batch")
	cmd.Dir, cmd.Env = dir, testenv.GitEnv()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git cat-file: %v", err)
	}
	objs := map[plumbing.Hash]gitObject{}
	for len(out) > 0 {
		head, rest, _ := bytes.Cut(out, []byte("\n"))
		var hex, typ string
		var size int
		if _, err := fmt.Sscanf(string(head), "%s %s %d", &hex, &typ, &size); err != nil || size+1 > len(rest) {
			t.Fatalf("git cat-file: %q: %v", head, err)
		}
		objs[plumbing.NewHash(hex)] = gitObject{typ, rest[:size]}
		out = rest[size+1:]
	}
	if len(objs) < 50 {
		t.Fatalf("git cat-file: only %d objects", len(objs))
	}
	return objs
}
