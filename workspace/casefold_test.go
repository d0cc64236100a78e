package workspace

import (
	"context"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// TestCaseCollisions: names in one directory that differ only in case are
// errors naming both paths and why, in a check of the whole tree and in
// one of the changed paths (the push), which finds a new name colliding
// with one already there.
func TestCaseCollisions(t *testing.T) {
	tree := fstest.MapFS{
		"SOUL.md":              {Data: []byte("calm\n")},
		"soul.md":              {Data: []byte("loud\n")},
		"AGENTS.md":            {Data: []byte("rules\n")},
		"skills/PDF/SKILL.md":  {Data: []byte("---\nname: pdf\n---\n")},
		"skills/pdf/SKILL.md":  {Data: []byte("---\nname: pdf\n---\n")},
		"skills/Pdf/SKILL.md":  {Data: []byte("---\nname: pdf\n---\n")},
		"skills/docx/SKILL.md": {Data: []byte("---\nname: docx\n---\n")},
		"memory/Ação.md":       {Data: []byte("- a\n")},
		"memory/AÇÃO.md":       {Data: []byte("- b\n")},
	}
	for _, tc := range []struct {
		name  string
		paths []string
		want  []string // "path: the other path"
	}{
		{"whole tree", nil, []string{
			"memory/Ação.md: memory/AÇÃO.md",
			"skills/Pdf: skills/PDF",
			"skills/pdf: skills/PDF",
			"soul.md: SOUL.md",
		}},
		{"a new name beside an old one", []string{"soul.md"}, []string{"soul.md: SOUL.md"}},
		{"the old name changed", []string{"SOUL.md"}, []string{"SOUL.md: soul.md"}},
		{"a file in a colliding directory", []string{"skills/pdf/SKILL.md"}, []string{"skills/Pdf: skills/PDF", "skills/pdf: skills/PDF"}},
		{"many names in one directory", []string{"AGENTS.md", "a.md", "b.md", "c.md", "soul.md", "memory/x.md"}, []string{"soul.md: SOUL.md"}},
		{"no collision on the way", []string{"AGENTS.md", "skills/docx/SKILL.md"}, nil},
		{"a deleted path", []string{"gone/x.md"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, p := range CheckFiles(context.Background(), tree, tc.paths) {
				if p.Code != CodeCaseCollision {
					continue
				}
				if p.Severity != SeverityError || !strings.Contains(p.Message, "differ only in case") || !strings.Contains(p.Message, "macOS or Windows") {
					t.Errorf("%s: %v %q", p.Path, p.Severity, p.Message)
				}
				other, _, _ := strings.Cut(p.Message, " and ")
				got = append(got, p.Path+": "+other)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("case collisions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// foldedOnly is a FoldedDirFS that fails a test which lists a directory
// whole: a check of some paths reads only the names like theirs.
type foldedOnly struct {
	fstest.MapFS
	t *testing.T
}

func (f foldedOnly) ReadDir(name string) ([]fs.DirEntry, error) {
	f.t.Errorf("ReadDir(%s): a check of some paths listed a directory whole", name)
	return f.MapFS.ReadDir(name)
}

func (f foldedOnly) ReadDirFolded(name string, lower []string) ([]fs.DirEntry, error) {
	return ReadDirFolded(f.MapFS, name, lower)
}

// TestCaseCollisionsFolded: the check of some paths finds a collision
// through a FoldedDirFS's look-up, never listing a directory whole, and
// ReadDirFolded over a plain file system keeps only the names asked for.
func TestCaseCollisionsFolded(t *testing.T) {
	tree := fstest.MapFS{
		"users/Ann/MEMORY.md": {Data: []byte("- a\n")},
		"users/ann/MEMORY.md": {Data: []byte("- b\n")},
		"users/bob/MEMORY.md": {Data: []byte("- c\n")},
	}
	probs := CheckFiles(context.Background(), foldedOnly{tree, t}, []string{"users/ann/MEMORY.md"})
	var got []string
	for _, p := range probs {
		if p.Code == CodeCaseCollision {
			got = append(got, p.Path)
		}
	}
	if want := []string{"users/ann"}; !slices.Equal(got, want) {
		t.Errorf("collisions %v, want %v", got, want)
	}
	es, err := ReadDirFolded(tree, "users", []string{"ann", "zed"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	if want := []string{"Ann", "ann"}; !slices.Equal(names, want) {
		t.Errorf("ReadDirFolded = %v, want %v", names, want)
	}
}
