package gitsync

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"io"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// inflate is the content of zlib stream b, checksum checked.
func inflate(t testing.TB, b []byte) []byte {
	t.Helper()
	zr, err := zlib.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("zlib header: %v", err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("inflate: %v", err)
	}
	return got
}

// blobObject is a blob of content.
func blobObject(content []byte) *plumbing.MemoryObject {
	o := &plumbing.MemoryObject{}
	o.SetType(plumbing.BlobObject)
	o.Write(content)
	return o
}

// TestBlobStreams: each version written at a path inflates to itself
// (checksum and all), and a version that extends the one before reuses
// that one's stream as it is.
func TestBlobStreams(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	noise := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return string(b)
	}
	big := strings.Repeat("- a line of the daily log\n", 4000) // past a deflate window
	for _, tc := range []struct {
		name     string
		versions []string
		// spliced[i]: version i is version i-1's stream and more.
		spliced []bool
	}{
		{"appends", []string{"# Log\n", "# Log\n- one\n", "# Log\n- one\n- two\n"}, []bool{false, true, true}},
		{"from empty", []string{"", "x", "xy"}, []bool{false, true, true}},
		{"same again", []string{"abc\n", "abc\n", "abc\nd"}, []bool{false, true, true}},
		{"rewritten", []string{"abc\n", "xbc\n", "xbc\n+"}, []bool{false, false, true}},
		{"shortened", []string{"abc\ndef\n", "abc\n", "abc\ndef\n"}, []bool{false, false, true}},
		{"emptied", []string{"abc", "", "abc"}, []bool{false, false, true}},
		{"large", []string{big, big + "- more\n", big + "- more\n" + big}, []bool{false, true, true}},
		{"incompressible", []string{noise(70000), ""}, []bool{false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var z blobStreams
			var prev []byte
			for i, v := range tc.versions {
				var out bytes.Buffer
				if err := z.write(&out, "memory/log.md", blobObject([]byte(v))); err != nil {
					t.Fatal(err)
				}
				if got := inflate(t, out.Bytes()); string(got) != v {
					t.Fatalf("version %d inflates to %d bytes, not its %d", i, len(got), len(v))
				}
				// The stream without its header and its final block and checksum.
				body := out.Bytes()[len(zlibHeader) : out.Len()-len(finalBlock)-4]
				if reused := prev != nil && bytes.HasPrefix(body, prev); reused != tc.spliced[i] {
					t.Errorf("version %d reuses the stream before: %v, want %v", i, reused, tc.spliced[i])
				}
				prev = bytes.Clone(body)
			}
		})
	}
}

// TestBlobStreamsSlack: a log appended to again and again is deflated
// whole again once its splices pass the slack, and its stream stays
// within the slack of deflating it whole.
func TestBlobStreamsSlack(t *testing.T) {
	var z blobStreams
	log := []byte(strings.Repeat("- a line of the daily log, as agents write them\n", 200))
	whole := 0
	for i := range 300 {
		log = fmt.Appendf(log, "- %d: the agent noted something about the user's plans\n", i)
		var out bytes.Buffer
		if err := z.write(&out, "log.md", blobObject(log)); err != nil {
			t.Fatal(err)
		}
		if got := inflate(t, out.Bytes()); !bytes.Equal(got, log) {
			t.Fatalf("append %d: inflates to %d bytes, not %d", i, len(got), len(log))
		}
		s, _ := z.byPath.get("log.md")
		if s.whole == len(s.deflated) {
			whole++
		}
		if extra := len(s.deflated) - s.whole; extra > max(s.whole/spliceSlack, minSlack)+200 {
			t.Fatalf("append %d: %d bytes spliced onto %d", i, extra, s.whole)
		}
	}
	if whole < 2 || whole > 60 {
		t.Errorf("deflated whole %d times in 300 appends", whole)
	}
}

// TestBlobStreamsPaths: the stream kept at one path is not spliced into
// a blob at another, and forgetting them all (past blobStreamsSize)
// only costs the splice.
func TestBlobStreamsPaths(t *testing.T) {
	var z blobStreams
	write := func(path, content string) []byte {
		t.Helper()
		var out bytes.Buffer
		if err := z.write(&out, path, blobObject([]byte(content))); err != nil {
			t.Fatal(err)
		}
		if got := inflate(t, out.Bytes()); string(got) != content {
			t.Fatalf("%s inflates to %q, not %q", path, got, content)
		}
		return out.Bytes()
	}
	write("a.md", "alpha\n")
	write("b.md", "beta\n")
	write("a.md", "alpha\nmore\n")
	write("b.md", "beta\nmore\n")
	z.keep("fill", &blobStream{blob: blobObject(make([]byte, blobStreamsSize/2))})
	z.keep("last", &blobStream{blob: blobObject(make([]byte, blobStreamsSize/2))})
	if _, ok := z.byPath.get("a.md"); ok || z.byPath.size > blobStreamsSize {
		t.Errorf("past blobStreamsSize the old streams stay (%d bytes)", z.byPath.size)
	}
	write("a.md", "alpha\nmore\nagain\n")
}

// TestAdler32Update: continuing a checksum matches computing it whole,
// across the lengths where the sums are reduced.
func TestAdler32Update(t *testing.T) {
	b := bytes.Repeat([]byte{0xff}, 3*5552+7)
	for _, cut := range []int{0, 1, 5551, 5552, 5553, 11104, len(b)} {
		if got, want := adler32Update(adler32.Checksum(b[:cut]), b[cut:]), adler32.Checksum(b); got != want {
			t.Errorf("cut at %d: %08x, want %08x", cut, got, want)
		}
	}
}

// FuzzBlobStreams: a blob written after another at its path inflates to
// itself, whatever the two are, spliced or not.
func FuzzBlobStreams(f *testing.F) {
	f.Add([]byte("# Log\n"), []byte("- one\n"), false)
	f.Add([]byte(""), []byte("x"), false)
	f.Add([]byte("abc"), []byte(""), true)
	f.Fuzz(func(t *testing.T, old, added []byte, rewrite bool) {
		var z blobStreams
		var out bytes.Buffer
		if err := z.write(&out, "p", blobObject(old)); err != nil {
			t.Fatal(err)
		}
		if got := inflate(t, out.Bytes()); !bytes.Equal(got, old) {
			t.Fatalf("first version inflates to %q, not %q", got, old)
		}
		next := append(bytes.Clone(old), added...)
		if rewrite && len(next) > 0 {
			next[0]++
		}
		out.Reset()
		if err := z.write(&out, "p", blobObject(next)); err != nil {
			t.Fatal(err)
		}
		if got := inflate(t, out.Bytes()); !bytes.Equal(got, next) {
			t.Fatalf("second version inflates to %q, not %q", got, next)
		}
	})
}

// TestStoredTrees: each tree written at a directory inflates to itself
// (checksum and all) whatever changed since the one before, across
// stored blocks' and compare chunks' bounds.
func TestStoredTrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	sized := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return b
	}
	changed := func(b []byte, at ...int) []byte {
		c := bytes.Clone(b)
		for _, i := range at {
			c[i] ^= 0xff
		}
		return c
	}
	big := sized(3*maxStored + 17)
	mid := sized(1000)
	for _, tc := range []struct {
		name  string
		trees [][]byte
	}{
		{"empty", [][]byte{{}, {}, {1}}},
		{"in place", [][]byte{mid, changed(mid, 0), changed(mid, 0, 255, 256, 999), mid}},
		{"grown and shrunk", [][]byte{mid, mid[:999], mid, sized(40)}},
		{"block bounds", [][]byte{sized(maxStored), sized(maxStored + 1), big[:maxStored]}},
		{"many blocks", [][]byte{big, changed(big, 0, maxStored-1, maxStored, 2*maxStored+3, len(big)-1), bytes.Repeat([]byte{0xff}, len(big)), make([]byte, len(big))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var z storedTrees
			for i, tree := range tc.trees {
				o := &plumbing.MemoryObject{}
				o.SetType(plumbing.TreeObject)
				o.Write(tree)
				var out bytes.Buffer
				if err := z.write(&out, "users", o); err != nil {
					t.Fatal(err)
				}
				if got := inflate(t, out.Bytes()); !bytes.Equal(got, tree) {
					t.Fatalf("tree %d inflates to %d bytes, not its %d", i, len(got), len(tree))
				}
				if kept, _ := z.byDir.get("users"); kept.adler != adler32.Checksum(tree) {
					t.Errorf("tree %d kept with checksum %08x, not %08x", i, kept.adler, adler32.Checksum(tree))
				}
			}
		})
	}
}

// TestStoredTreesBuffers: a small directory's tree is not kept in the
// buffer a large one's was (a thousand users' directories each holding
// the 33 KB of the users/ tree), and what is kept is counted.
func TestStoredTreesBuffers(t *testing.T) {
	var z storedTrees
	write := func(dir string, n int) {
		t.Helper()
		o := &plumbing.MemoryObject{}
		o.SetType(plumbing.TreeObject)
		o.Write(bytes.Repeat([]byte{'t'}, n))
		if err := z.write(io.Discard, dir, o); err != nil {
			t.Fatal(err)
		}
	}
	for u := range 50 {
		write("users", 33000)
		write(fmt.Sprintf("users/u%d", u), 40)
	}
	total := 0
	for dir, s := range z.byDir.m {
		tr := s.v
		if dir != "users" && cap(tr.content) > 1000 {
			t.Fatalf("%s keeps %d bytes for a tree of %d", dir, cap(tr.content), len(tr.content))
		}
		total += cap(tr.content)
	}
	if z.byDir.size != total {
		t.Errorf("counts %d bytes kept, holds %d", z.byDir.size, total)
	}
}

// FuzzAdler32Since: a checksum updated from the bytes that changed is
// the checksum summed whole.
func FuzzAdler32Since(f *testing.F) {
	f.Add([]byte("40000 u0001\x00abcdefghijklmnopqrst"), []byte("\xff\x00\x07"), uint16(7))
	f.Fuzz(func(t *testing.T, old, xor []byte, at uint16) {
		next := bytes.Clone(old)
		for i, x := range xor {
			if j := int(at) + i*97; j < len(next) {
				next[j] ^= x
			}
		}
		prev := &storedTree{content: old, adler: adler32.Checksum(old)}
		if got, want := adler32Since(prev, next), adler32.Checksum(next); got != want {
			t.Errorf("%08x, want %08x", got, want)
		}
	})
}

// TestCommitAppendsGitReads: a file appended to by one commit after
// another (each blob spliced onto the one before) is what git reads at
// every commit, git fsck finds nothing wrong, and a clone has it all.
func TestCommitAppendsGitReads(t *testing.T) {
	t.Parallel()
	dir := newBare(t)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	agent := object.Signature{Name: "Ada", Email: "ada@agents.invalid"}
	ctx := context.Background()
	// A directory whose tree takes stored blocks of its own.
	many := make([]FileWrite, 2500)
	for i := range many {
		many[i] = FileWrite{Path: fmt.Sprintf("users/many/f%04d.md", i), Content: []byte(fmt.Sprint(i))}
	}
	if _, err := r.Commit(ctx, CommitRequest{Ref: "main", Writes: many, Author: agent}); err != nil {
		t.Fatal(err)
	}
	logs := map[string]string{}
	type version struct{ commit, path, content string }
	var versions []version
	for i := range 40 {
		path := fmt.Sprintf("users/u%d/memory/2026-11-26.md", i%3)
		if i%5 == 4 {
			path = fmt.Sprintf("users/many/f%04d.md", i*37)
		}
		switch {
		case i == 20: // rewritten, not extended
			logs[path] = "# Rewritten\n"
		case i%7 == 6: // a large addition
			logs[path] += strings.Repeat(fmt.Sprintf("- bulk %d\n", i), 3000)
		default:
			logs[path] += fmt.Sprintf("- %02d: remembered something\n", i)
		}
		h, err := r.Commit(ctx, CommitRequest{Ref: "main", Writes: []FileWrite{{Path: path, Content: []byte(logs[path])}}, Author: agent})
		if err != nil {
			t.Fatal(err)
		}
		versions = append(versions, version{h.String(), path, logs[path]})
	}
	git(t, dir, "fsck", "--full", "--strict")
	packs, err := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.idx"))
	if err != nil || len(packs) < 40 {
		t.Fatalf("%d packs, %v", len(packs), err)
	}
	for _, idx := range packs {
		git(t, dir, "verify-pack", idx) // checksums, and each entry's CRC
	}
	// A repack that reuses the packs' deflated data as it is.
	git(t, dir, "repack", "-a", "-d", "-q")
	git(t, dir, "fsck", "--full", "--strict")
	for _, v := range versions {
		if got := git(t, dir, "cat-file", "blob", v.commit+":"+v.path); got != strings.TrimRight(v.content, "\n") {
			t.Fatalf("git reads %s at %s as %d bytes, not %d", v.path, v.commit, len(got), len(v.content))
		}
	}
	clone := filepath.Join(t.TempDir(), "clone")
	git(t, dir, "clone", "-q", "--no-local", dir, clone)
	git(t, clone, "fsck", "--full", "--strict")
	last := versions[len(versions)-1]
	if got := git(t, clone, "show", "HEAD:"+last.path); got != strings.TrimRight(last.content, "\n") {
		t.Errorf("the clone reads %s as %d bytes, not %d", last.path, len(got), len(last.content))
	}
}

// BenchmarkOwnPackAppend writes the pack of an append (a daily log one
// entry longer than at the last append to it, as the daemon writes them:
// 7.5 KB after 100 entries; a tree of 1,000 entries with one changed; a
// commit) for 1,000 users' logs in turn:
// with the paths of blob and tree given (kept=true: the blob spliced,
// the tree's checksum updated) and without (the pack writer before).
func BenchmarkOwnPackAppend(b *testing.B) {
	const users = 1000
	obj := func(t plumbing.ObjectType, content []byte) *plumbing.MemoryObject {
		o := &plumbing.MemoryObject{}
		o.SetType(t)
		o.Write(content)
		return o
	}
	entry := []byte("40000 u0000\x00abcdefghijklmnopqrst")
	commit := obj(plumbing.CommitObject, []byte("tree 0123456789012345678901234567890123456789\nauthor Ada <ada@agents.invalid> 1 +0000\n\nAppend\n"))
	for _, kept := range []bool{true, false} {
		b.Run(fmt.Sprintf("kept=%v", kept), func(b *testing.B) {
			logs := make([][]byte, users)
			for u := range logs {
				logs[u] = []byte("# 2026-11-26\n")
			}
			tree := bytes.Repeat(entry, users)
			var zs packZlib
			var n, i int
			for b.Loop() {
				u := i % users
				i++
				logs[u] = fmt.Appendf(logs[u], "\n## 14:%02d\n\n**User:** u%04d\n\nentry %d: met customer %d about invoice %d\n", i%60, u, i, i%977, i*7)
				blob := obj(plumbing.BlobObject, logs[u])
				at := (u+1)*len(entry) - 20
				binary.BigEndian.PutUint64(tree[at:], uint64(i))
				to := obj(plumbing.TreeObject, tree)
				var names map[plumbing.Hash]string
				if kept {
					names = map[plumbing.Hash]string{blob.Hash(): fmt.Sprint(u), to.Hash(): "users"}
				}
				cw := &countWriter{w: io.Discard}
				if _, _, err := writeOwnPack(cw, []*plumbing.MemoryObject{blob, to, commit}, names, &zs); err != nil {
					b.Fatal(err)
				}
				n += int(cw.n)
			}
			b.ReportMetric(float64(n)/float64(i), "pack-B/op")
		})
	}
}
