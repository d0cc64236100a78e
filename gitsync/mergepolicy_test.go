package gitsync

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"testing"
)

// The merge policy decides how a file both sides changed merges: a
// policy that combines nothing merges line by line, so two lines added
// at one place conflict; one that combines the file is given the trees
// of both sides (ours: live, theirs: main) and its result lands on live.
func TestMergePolicy(t *testing.T) {
	t.Parallel()
	lineByLine := func(string, fs.FS, fs.FS) func(base, ours, theirs []byte) []byte { return nil }
	var sawTrees bool
	combining := func(p string, ours, theirs fs.FS) func(base, ours, theirs []byte) []byte {
		if p != "notes.txt" {
			return nil
		}
		_, oerr := fs.Stat(ours, "live-only.txt")
		_, terr := fs.Stat(theirs, "main-only.txt")
		sawTrees = oerr == nil && terr == nil
		return func(base, ours, theirs []byte) []byte {
			return append(append([]byte(nil), ours...), theirs[len(base):]...)
		}
	}
	tests := []struct {
		name   string
		policy MergePolicy
		want   string // notes.txt on live, "" for a conflict
	}{
		{"line by line", lineByLine, ""},
		{"combined", combining, "a\nagent\nperson\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, url, dir := testHost(t, HostOptions{Live: true, Merge: tc.policy})
			src := newWorkRepo(t, map[string]string{"AGENTS.md": "v0\n", "notes.txt": "a\n"})
			git(t, src, "push", "-q", url+"/ws.git", "main")
			r, err := h.Repository("ws")
			if err != nil {
				t.Fatal(err)
			}
			agentWrite(t, r, map[string]string{"notes.txt": "a\nagent\n", "live-only.txt": "x\n"})
			commitFiles(t, src, map[string]string{"notes.txt": "a\nperson\n", "main-only.txt": "y\n"}, "person")
			git(t, src, "push", "-q", filepath.Join(dir, "ws.git"), "main")
			_, err = r.MergeMain(context.Background())
			var mce *MergeConflictError
			if tc.want == "" {
				if !errors.As(err, &mce) || mce.Conflicts[0].Path != "notes.txt" {
					t.Fatalf("MergeMain: %v, want a conflict on notes.txt", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := git(t, filepath.Join(dir, "ws.git"), "show", "live:notes.txt"); got+"\n" != tc.want {
				t.Errorf("notes.txt on live %q, want %q", got, tc.want)
			}
			if !sawTrees {
				t.Error("the policy was not given live's and main's trees")
			}
		})
	}
}
