package gitsync

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
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

// TestRollUpReadsOnlyItsPacks: RollUp reads the packs it rolls up and
// the loose objects, not the history in the packs that stay (here so
// damaged that any read of it fails): the trees and blobs of the small
// packs go to git with their paths, which its delta search groups them
// by (those of larger packs without), the loose object is packed, and
// each object is listed once.
func TestRollUpReadsOnlyItsPacks(t *testing.T) {
	t.Parallel()
	dir := newBare(t)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	commitPacks(t, r, "old", 60) // more than namedMax objects
	git(t, dir, "repack", "-q", "-a", "-d")
	history, err := filepath.Glob(filepath.Join(dir, "objects", "pack", "pack-*.pack"))
	if err != nil || len(history) != 1 {
		t.Fatalf("%v packs after git repack -a: %v", history, err)
	}
	if r, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	commitPacks(t, r, "new", 4)
	loose := gitIn(t, dir, "a loose blob\n", "hash-object", "-w", "--stdin")
	blob := gitIn(t, dir, "", "rev-parse", "main:new/1/1.md")
	tree := gitIn(t, dir, "", "rev-parse", "main:new/1")

	before, err := listPacks(filepath.Join(dir, "objects", "pack"))
	if err != nil {
		t.Fatal(err)
	}
	roll, err := rollUpSet(filepath.Join(dir, "objects", "pack"), before, rollUpMax)
	if err != nil || len(roll) != 4 {
		t.Fatalf("rolls up %v (%v), want the 4 commits' packs", roll, err)
	}
	list, err := rollUpObjects(filepath.Join(dir, "objects", "pack"), roll, slices.Values([]plumbing.Hash{plumbing.NewHash(loose)}), nil)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(list), "\n"), "\n")
	for _, want := range []string{blob + " new/1/1.md", tree + " new/1", loose} {
		if !slices.Contains(lines, want) {
			t.Errorf("no line %q in\n%s", want, list)
		}
	}
	objs := map[string]bool{}
	for _, l := range lines {
		h, _, _ := strings.Cut(l, " ")
		if objs[h] {
			t.Errorf("%s listed twice", h)
		}
		objs[h] = true
	}
	if len(objs) != 4*5+1 { // a blob, two trees, the root, the commit each
		t.Errorf("%d objects listed, want %d:\n%s", len(objs), 4*5+1, list)
	}

	// The objects of a larger pack go without their paths.
	list, err = rollUpObjects(filepath.Join(dir, "objects", "pack"), append(roll, strings.TrimSuffix(filepath.Base(history[0]), ".pack")), slices.Values([]plumbing.Hash(nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	lines = strings.Split(strings.TrimSuffix(string(list), "\n"), "\n")
	old := gitIn(t, dir, "", "rev-parse", "main:old/1/1.md")
	for _, want := range []string{blob + " new/1/1.md", old} {
		if !slices.Contains(lines, want) {
			t.Errorf("no line %q in the list with the history", want)
		}
	}

	damage(t, history[0])
	if err := r.RollUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := packFiles(t, dir); n != 2 {
		t.Errorf("%d packs after the roll-up, want the history's and the new one", n)
	}
	if n := len(looseObjects(filepath.Join(dir, "objects"))); n != 0 {
		t.Errorf("%d loose objects after the roll-up", n)
	}
	if got := gitIn(t, dir, "", "cat-file", "-p", blob); got == "" {
		t.Errorf("blob %s empty after the roll-up", blob)
	}
}

// damage zeroes the objects of a pack file, leaving its header and
// checksum.
func damage(t *testing.T, pack string) {
	t.Helper()
	fi, err := os.Stat(pack)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(pack, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(pack, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(make([]byte, fi.Size()-12-20), 12); err != nil {
		t.Fatal(err)
	}
}

// TestRollUpNamesFromPathBook: the paths the commits of this process
// remembered name the objects of their packs as the walk through their
// trees would, without a tree read, and are forgotten once taken.
func TestRollUpNamesFromPathBook(t *testing.T) {
	t.Parallel()
	dir := newBare(t)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	commitPacks(t, r, "mem", 12)
	packs := filepath.Join(dir, "objects", "pack")
	before, err := listPacks(packs)
	if err != nil {
		t.Fatal(err)
	}
	roll, err := rollUpSet(packs, before, rollUpMax)
	if err != nil || len(roll) != 12 {
		t.Fatalf("rolls up %v (%v), want the 12 commits' packs", roll, err)
	}
	paths := func(book *pathBook) (map[plumbing.Hash]string, int) {
		t.Helper()
		rs, err := openRollSet(packs, roll)
		if err != nil {
			t.Fatal(err)
		}
		defer rs.close()
		names, err := rs.paths(book)
		if err != nil {
			t.Fatal(err)
		}
		return names, rs.reads
	}
	walked, reads := paths(nil)
	if reads == 0 || len(walked) != 12*4 { // a blob, two trees, the root each
		t.Fatalf("the walk named %d objects reading %d trees, want 48 objects", len(walked), reads)
	}
	booked, reads := paths(&r.st.paths)
	if reads != 0 {
		t.Errorf("%d trees read with the paths remembered", reads)
	}
	if !maps.Equal(booked, walked) {
		t.Errorf("remembered paths\n%v\nwant those of the walk\n%v", booked, walked)
	}
	if n := r.st.paths.len(); n != 0 {
		t.Errorf("%d paths left after the roll-up took them", n)
	}
}
