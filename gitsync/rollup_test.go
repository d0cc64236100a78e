package gitsync

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRollUpSet: RollUp chooses the smallest packs, each next one while
// it has fewer objects than twice those chosen before it, never a kept
// one nor one of more than the most objects; git's own index sizes give
// the object counts.
func TestRollUpSet(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	gitIn(t, repo, "", "init", "-q", "--bare")
	packDir := filepath.Join(repo, "objects", "pack")
	next := 0
	pack := func(n int) string { // a pack of n new blobs
		var objs []string
		for range n {
			objs = append(objs, gitIn(t, repo, fmt.Sprintf("blob %d\n", next), "hash-object", "-w", "--stdin"))
			next++
		}
		return "pack-" + gitIn(t, repo, strings.Join(objs, "\n")+"\n", "pack-objects", "-q", filepath.Join(packDir, "pack"))
	}
	p1, p2, p3, p5, p12, p60 := pack(1), pack(2), pack(3), pack(5), pack(12), pack(60)
	kept := pack(1)
	if err := os.WriteFile(filepath.Join(packDir, kept+".keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	all := []string{p60, kept, p12, p5, p3, p2, p1}
	for _, tc := range []struct {
		name   string
		before []string
		most   int64
		want   []string
	}{
		{"geometric", all, 1000, []string{p1, p2, p3, p5, p12}},                      // 60 ≥ 2×23
		{"at most 10 objects", all, 10, []string{p1, p2, p3, p5}},                    // 12 > 10
		{"a big one follows", []string{p1, p2, p3, p60}, 1000, []string{p1, p2, p3}}, // 60 ≥ 2×6
		{"a progression already", []string{p1, p2, p12, p60}, 1000, nil},
		{"one small one", []string{p60, p1}, 1000, nil},
		{"only big ones", []string{p60, p12}, 10, nil},
	} {
		got, err := rollUpSet(packDir, tc.before, tc.most)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: rolls up %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestMaintainRollsUpByPackCount: the PacksPerRepack-th pack a hosted
// repository writes (not one before) wakes Maintain, which rolls the
// small packs up into one.
func TestMaintainRollsUpByPackCount(t *testing.T) {
	t.Parallel()
	h, url, dir := testHost(t, HostOptions{})
	src := newWorkRepo(t, map[string]string{"AGENTS.md": "a\n"})
	git(t, src, "push", "-q", url+"/ws.git", "main")
	r, err := h.Repository("ws")
	if err != nil {
		t.Fatal(err)
	}
	bare := filepath.Join(dir, "ws.git")
	woken := func() bool {
		select {
		case <-h.maintain:
			return true
		default:
			return false
		}
	}
	woken() // the push's pack
	commitPacks(t, r, "a", PacksPerRepack-1-int(r.PacksWritten()))
	if woken() {
		t.Fatalf("Maintain woken after %d packs", r.PacksWritten())
	}
	commitPacks(t, r, "b", 1)
	if !woken() {
		t.Fatalf("Maintain not woken after %d packs", r.PacksWritten())
	}
	before := packFiles(t, bare)
	h.repackAll(context.Background(), RepackThreshold, false)
	if n := packFiles(t, bare); n > 2 || r.PacksWritten() != 0 {
		t.Errorf("%d packs (from %d), %d written since, after the roll-up", n, before, r.PacksWritten())
	}
	git(t, bare, "fsck", "--strict", "--no-dangling")
}
