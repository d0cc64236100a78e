package workspace

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"testing/fstest"
)

// TestCheckPathsIsCheckFilesOwn: on a tree with names that differ only
// in case at every level (the root, a users directory, a user's
// directory, a memory directory), files too large or not UTF-8, CheckPaths
// finds exactly what CheckFiles finds about the paths themselves, for
// paths old and new, alone and together (many: looked up in a set).
func TestCheckPathsIsCheckFilesOwn(t *testing.T) {
	tree := fstest.MapFS{
		"SOUL.md":                        {Data: []byte("calm\n")},
		"soul.md":                        {Data: []byte("loud\n")},
		"users/ann/USER.md":              {Data: []byte("ann\n")},
		"users/Ann/USER.md":              {Data: []byte("Ann\n")},
		"users/bob/memory/2026-03-01.md": {Data: []byte("- a\n")},
		"users/bob/memory/2026-03-02.md": {Data: []byte("- b\n")},
		"users/bob/Memory/2026-03-01.md": {Data: []byte("- c\n")},
		"users/bob/notes.md":             {Data: []byte("- d\n")},
		"users/bob/NOTES.md":             {Data: []byte("- e\n")},
		"users/cy/memory/Ação.md":        {Data: []byte("- a\n")},
		"users/cy/memory/AÇÃO.md":        {Data: []byte("\xff\n")},
		"users/cy/big.md":                {Data: make([]byte, MaxFileBytes+1)},
	}
	all := []string{
		"SOUL.md", "soul.md", "Soul.md",
		"users/ann/USER.md", "users/Ann/USER.md", "users/ANN/new.md",
		"users/bob/memory/2026-03-01.md", "users/bob/Memory/2026-03-01.md", "users/bob/memory/2026-03-03.md",
		"users/bob/notes.md", "users/bob/NOTES.md", "users/bob/Notes.md",
		"users/cy/memory/Ação.md", "users/cy/memory/AÇÃO.md", "users/cy/memory/ação.md", "users/cy/big.md", "users/dee/new.md",
	}
	var sets [][]string
	for _, p := range all {
		sets = append(sets, []string{p})
	}
	sets = append(sets, all, []string{"users/bob/notes.md", "users/bob/memory/2026-03-01.md"}, []string{"soul.md", "users/bob/NOTES.md", "users/Ann/USER.md"})
	ctx := context.Background()
	found := 0
	for _, paths := range sets {
		var want []Problem
		for _, p := range CheckFiles(ctx, tree, paths) {
			if slices.Contains(paths, p.Path) {
				want = append(want, p)
			}
		}
		found += len(want)
		if got := CheckPaths(ctx, tree, paths, nil); (len(got) != 0 || len(want) != 0) && !reflect.DeepEqual(got, want) {
			t.Errorf("%v: CheckPaths finds\n%v\nCheckFiles finds of them\n%v", paths, got, want)
		}
	}
	if found < 10 {
		t.Fatalf("the tree makes only %d problems about the paths checked: the test checks too little", found)
	}
}
