package daemon

import (
	"io/fs"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/workspace"
)

// TestPendingFSReadDir: a pendingFS lists every directory as the tree the
// writes make (a fstest.MapFS of it is the reference), names sorted,
// whether the writes change the directory or leave it as it was, and
// read again after more writes, and opens, reads and states its files
// and directories consistently (fstest.TestFS). Its ReadDirFolded, alone and under
// another write's view (whose base it is), is the listing's entries of
// the lowered names asked for.
func TestPendingFSReadDir(t *testing.T) {
	base := fstest.MapFS{
		"a.md":          {Data: []byte("a\n")},
		"A.md":          {Data: []byte("A\n")},
		"A.MD":          {Data: []byte("AM\n")},
		"users/U2/v.md": {Data: []byte("v\n")},
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
					checkFolded(t, ref, d, pf)
					checkFolded(t, ref, d, newPendingFS(pf))
				}
				if err := fstest.TestFS(pf, slices.Sorted(maps.Keys(ref))...); err != nil {
					t.Error(err)
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

// checkFolded compares fsys's ReadDirFolded of dir with ref's listing of
// it, for a few sets of lowered names.
func checkFolded(t *testing.T, ref fs.FS, dir string, fsys workspace.FoldedDirFS) {
	t.Helper()
	for _, lower := range [][]string{{"a.md"}, {"u2", "u3"}, {"a", "new"}, {"x.md", "zzz"}, {"gone.md", "a.b"}} {
		all, werr := fs.ReadDir(ref, dir)
		got, gerr := fsys.ReadDirFolded(dir, lower)
		if (werr == nil) != (gerr == nil) {
			t.Errorf("ReadDirFolded(%s, %v): err %v, want %v", dir, lower, gerr, werr)
			continue
		}
		var want []fs.DirEntry
		for _, e := range all {
			if slices.Contains(lower, strings.ToLower(e.Name())) {
				want = append(want, e)
			}
		}
		if g, w := listing(got), listing(want); !slices.Equal(g, w) {
			t.Errorf("ReadDirFolded(%s, %v) = %v, want %v", dir, lower, g, w)
		}
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
