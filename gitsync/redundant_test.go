package gitsync

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// gitIn runs git in dir with stdin and returns its trimmed output.
func gitIn(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// TestRedundantPacks: a pack of before is dropped when each of its
// objects is in a pack that stays (a copy of a pack loses one of the
// two, a kept pack never goes), and the loose objects asked about are
// counted in the packs that stay, found in each pack's index without a
// copy of its names; the packs said to stay are not read.
func TestRedundantPacks(t *testing.T) {
	repo := t.TempDir()
	gitIn(t, repo, "", "init", "-q", "--bare")
	var blobs []string
	for _, s := range []string{"one\n", "two\n", "three\n", "four\n"} {
		blobs = append(blobs, gitIn(t, repo, s, "hash-object", "-w", "--stdin"))
	}
	packDir := filepath.Join(repo, "objects", "pack")
	pack := func(objs ...string) string {
		sum := gitIn(t, repo, strings.Join(objs, "\n")+"\n", "pack-objects", "-q", filepath.Join(packDir, "pack"))
		return "pack-" + sum
	}
	small := pack(blobs[0])         // in big too
	big := pack(blobs[0], blobs[1]) // holds small's object
	alone := pack(blobs[2])         // the only copy of its object
	also := []plumbing.Hash{plumbing.NewHash(blobs[0]), plumbing.NewHash(blobs[1]), plumbing.NewHash(blobs[2]), plumbing.NewHash(blobs[3])}
	for _, tc := range []struct {
		name   string
		before []string
		stay   []string // not read
		keep   string
		drop   []string
		packed []bool // of also
	}{
		{"all before", []string{small, big, alone}, nil, "", []string{small}, []bool{true, true, true, false}},
		{"only the small one before", []string{small}, nil, "", []string{small}, []bool{true, true, true, false}},
		{"a kept pack stays", []string{small, big, alone}, nil, small, nil, []bool{true, true, true, false}},
		{"none before", nil, nil, "", nil, []bool{true, true, true, false}},
		{"a pack that stays is not read", []string{small}, []string{big}, "", nil, []bool{true, false, true, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.keep != "" {
				keep := filepath.Join(packDir, tc.keep+".keep")
				if err := os.WriteFile(keep, nil, 0o644); err != nil {
					t.Fatal(err)
				}
				defer os.Remove(keep)
			}
			drop, packed, err := redundantPacks(packDir, tc.before, tc.stay, slices.Values(also))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(drop, tc.drop) {
				t.Errorf("drop %v, want %v", drop, tc.drop)
			}
			for i, h := range also {
				if got := packed[h]; got != tc.packed[i] {
					t.Errorf("%s (blob %d) packed in a staying pack: %v, want %v", h, i, got, tc.packed[i])
				}
			}
		})
	}
	// The file look-up answers as go-git's parse of the same index.
	for _, base := range []string{small, big, alone} {
		path := filepath.Join(packDir, base+".idx")
		x, err := openCheckedIndex(path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sameAnswers(t, x, b)
	}
}
