package gitsync

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"hash/adler32"
	"io"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

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
				if err := z.write(&out, "memory/log.md", []byte(v)); err != nil {
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

// TestBlobStreamsPaths: the stream kept at one path is not spliced into
// a blob at another, and forgetting them all (past blobStreamsSize)
// only costs the splice.
func TestBlobStreamsPaths(t *testing.T) {
	var z blobStreams
	write := func(path, content string) []byte {
		t.Helper()
		var out bytes.Buffer
		if err := z.write(&out, path, []byte(content)); err != nil {
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
	z.keep("huge.md", &blobStream{content: make([]byte, blobStreamsSize/4+1)})
	if _, ok := z.byPath["huge.md"]; ok {
		t.Errorf("a stream past a quarter of blobStreamsSize is kept")
	}
	for i := range 3 {
		z.keep(fmt.Sprint("fill", i), &blobStream{content: make([]byte, blobStreamsSize/4)})
	}
	if z.size > blobStreamsSize {
		t.Errorf("keeps %d bytes, past %d", z.size, blobStreamsSize)
	}
	z.keep("last", &blobStream{content: make([]byte, blobStreamsSize/4)})
	if _, ok := z.byPath["a.md"]; ok || z.size > blobStreamsSize {
		t.Errorf("past blobStreamsSize the old streams stay (%d bytes)", z.size)
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
		if err := z.write(&out, "p", old); err != nil {
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
		if err := z.write(&out, "p", next); err != nil {
			t.Fatal(err)
		}
		if got := inflate(t, out.Bytes()); !bytes.Equal(got, next) {
			t.Fatalf("second version inflates to %q, not %q", got, next)
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
	logs := map[string]string{}
	type version struct{ commit, path, content string }
	var versions []version
	for i := range 40 {
		path := fmt.Sprintf("users/u%d/memory/2026-11-26.md", i%3)
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
