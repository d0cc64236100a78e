package daemon

import (
	"io/fs"
	"maps"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/quirehq/quire/gitsync"
)

// TestPendingFSReadDir: a pendingFS lists every directory as the tree the
// writes make (a fstest.MapFS of it is the reference), names sorted,
// whether the writes change the directory or leave it as it was, and
// read again after more writes.
func TestPendingFSReadDir(t *testing.T) {
	base := fstest.MapFS{
		"a.md":          {Data: []byte("a\n")},
		"a/b.md":        {Data: []byte("b\n")},
		"a.b/c.md":      {Data: []byte("c\n")},
		"users/u1/x.md": {Data: []byte("x\n")},
		"users/u2/y.md": {Data: []byte("y\n")},
		"gone.md":       {Data: []byte("g\n")},
	}
	dirs := []string{".", "a", "a.b", "users", "users/u1", "users/u2", "users/u3", "new", "new/deep"}
	for _, tc := range []struct {
		name   string
		writes [][]gitsync.FileWrite // applied one after the other
	}{
		{"none", nil},
		{"into an existing directory", [][]gitsync.FileWrite{{{Path: "users/u1/x.md", Content: []byte("x2\n")}}}},
		{"a new user", [][]gitsync.FileWrite{{{Path: "users/u3/z.md", Content: []byte("z\n")}}}},
		{"a new file beside", [][]gitsync.FileWrite{{{Path: "users/u1/w.md", Content: []byte("w\n")}}}},
		{"deletions", [][]gitsync.FileWrite{{{Path: "gone.md", Delete: true}}, {{Path: "a/b.md", Delete: true}, {Path: "a/c.md", Content: []byte("c\n")}}}},
		{"created then deleted", [][]gitsync.FileWrite{{{Path: "new/deep/n.md", Content: []byte("n\n")}}, {{Path: "new/deep/n.md", Delete: true}}}},
		{"several", [][]gitsync.FileWrite{
			{{Path: "new/deep/n.md", Content: []byte("n\n")}, {Path: "a/b.md", Content: []byte("b2\n")}},
			{{Path: "users/u3/z.md", Content: []byte("z\n")}, {Path: "a.md", Delete: true}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pf := newPendingFS(base)
			ref := maps.Clone(base)
			check := func() {
				t.Helper()
				for _, d := range dirs {
					want, werr := fs.ReadDir(ref, d)
					got, gerr := pf.ReadDir(d)
					if (werr == nil) != (gerr == nil) {
						t.Errorf("ReadDir(%s): err %v, want %v", d, gerr, werr)
						continue
					}
					if g, w := listing(got), listing(want); !slices.Equal(g, w) {
						t.Errorf("ReadDir(%s) = %v, want %v", d, g, w)
					}
				}
			}
			check()
			for _, ws := range tc.writes {
				pf.apply(ws)
				for _, w := range ws {
					if w.Delete {
						delete(ref, w.Path)
					} else {
						ref[w.Path] = &fstest.MapFile{Data: w.Content}
					}
				}
				check()
			}
		})
	}
}

// listing is a directory's entries as name, "/" after a directory.
func listing(es []fs.DirEntry) []string {
	var out []string
	for _, e := range es {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		out = append(out, n)
	}
	return out
}
