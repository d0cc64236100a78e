package gitsync

import (
	"bytes"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// FuzzParseRef: any ref file content parses to a ref or a
// *BrokenRefError, never a panic; what a writer writes reads back.
func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"", "\n", "ref: refs/heads/main\n", strings.Repeat("a", 40) + "\n", strings.Repeat("0", 40), "garbage", "ref: ../x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ref, err := parseRef("refs/heads/x", "x", b)
		if (ref == nil) == (err == nil) {
			t.Fatalf("parseRef(%q) = %v, %v", b, ref, err)
		}
		if err != nil {
			return
		}
		var back string
		if ref.Type() == plumbing.SymbolicReference {
			back = "ref: " + ref.Target().String() + "\n"
		} else {
			back = ref.Hash().String() + "\n"
		}
		again, err := parseRef("refs/heads/x", "x", []byte(back))
		if err != nil || again.String() != ref.String() {
			t.Fatalf("round trip of %q: %v, %v", back, again, err)
		}
	})
}

// FuzzWithoutPacked: removing a ref from packed-refs content drops exactly
// its line (and its peeled line) and keeps every other byte.
func FuzzWithoutPacked(f *testing.F) {
	h := strings.Repeat("1", 40)
	f.Add([]byte("# pack-refs with: peeled fully-peeled sorted \n"+h+" refs/heads/a\n"+h+" refs/tags/t\n^"+h+"\n"+h+" refs/heads/b\n"), "refs/tags/t")
	f.Add([]byte(h+" refs/heads/a"), "refs/heads/a")
	f.Fuzz(func(t *testing.T, b []byte, name string) {
		out, found := withoutPacked(b, plumbing.ReferenceName(name))
		if !found {
			if !bytes.Equal(out, b) {
				t.Fatalf("nothing found but content changed: %q -> %q", b, out)
			}
			return
		}
		if len(out) >= len(b) {
			t.Fatalf("found %q but nothing removed", name)
		}
	})
}
