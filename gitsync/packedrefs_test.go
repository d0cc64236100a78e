package gitsync

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBrokenPackedRefs: a line of packed-refs that git refuses (git then
// reads no ref of the file: clones and fetches fail) is a
// *BrokenRefError naming the file and the line, like a broken loose
// ref; the good lines are still read.
func TestBrokenPackedRefs(t *testing.T) {
	t.Parallel()
	dir := newBare(t)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	commitPacks(t, r, "m", 1)
	main := git(t, dir, "rev-parse", "main")
	git(t, dir, "update-ref", "refs/heads/live", main)
	git(t, dir, "pack-refs", "--all")
	good, err := os.ReadFile(filepath.Join(dir, "packed-refs"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(good), main+" refs/heads/live\n") {
		t.Fatalf("packed-refs: %q", good)
	}
	for _, c := range []struct {
		name   string
		add    string // appended to the good file
		line   int    // the broken line (0: none)
		ref    string // the ref it names
		reason string
	}{
		{"good", "", 0, "", ""},
		{"garbage", "garbage\n", 4, "", `not "<commit id> <ref name>": "garbage"`},
		{"bad id", "12345 refs/heads/x\n", 4, "refs/heads/x", `not a commit id: "12345"`},
		{"dangerous name", main + " refs/heads/../x\n", 4, "", "not \"<commit id> <ref name>\""},
		{"odd name", main + " refs/heads/x.lock\n", 0, "", ""},
		{"comment after the header", "# c\n", 4, "", "not \"<commit id> <ref name>\""},
		{"peeled without a ref", "^" + main + "\n^" + main + "\n", 5, "", "not a peeled commit id after a ref"},
		{"unterminated", main + " refs/heads/y", 4, "", "the file ends in the middle of this line"},
		{"peeled after a ref", main + " refs/tags/t\n^" + main + "\n", 0, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(dir, "packed-refs"), append(slices.Clip(good), c.add...), 0o644); err != nil {
				t.Fatal(err)
			}
			_, gitErr := gitTry(dir, "for-each-ref")
			if (gitErr != nil) != (c.line != 0) {
				t.Fatalf("git for-each-ref: %v; the test expects git to refuse the file: %v", gitErr, c.line != 0)
			}
			err := r.Check()
			if c.line == 0 {
				if err != nil {
					t.Fatalf("Check = %v", err)
				}
				return
			}
			var br *BrokenRefError
			if !errors.As(err, &br) || br.Line != c.line || string(br.Name) != c.ref || !strings.Contains(br.Reason, c.reason) ||
				br.File != filepath.Join(dir, "packed-refs") {
				t.Fatalf("Check = %#v, want line %d of packed-refs naming %q: %s", err, c.line, c.ref, c.reason)
			}
			if !strings.Contains(br.Error(), "delete that line") {
				t.Errorf("the message says no repair: %v", br)
			}
			if c.ref != "" {
				if _, err := r.Resolve(c.ref); !errors.Is(err, ErrBrokenRef) {
					t.Errorf("Resolve(%s) = %v, want ErrBrokenRef", c.ref, err)
				}
			}
			// The good lines are read all the same.
			if h, err := r.Resolve("refs/heads/live"); err != nil || h.String() != main {
				t.Errorf("Resolve(live) next to a broken line = %v, %v", h, err)
			}
		})
	}
}
