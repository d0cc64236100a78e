package gitsync

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDamagedMirrorIsFetchedAgain: a follower's mirror whose pack is
// damaged is named in the log at ERROR after the next fetch, moved aside
// and fetched again whole; the fetch reports every ref as moved, so the
// daemon deploys again. A failed fetch leaves no temporary pack.
func TestDamagedMirrorIsFetchedAgain(t *testing.T) {
	t.Parallel()
	h, url, _ := testHost(t, HostOptions{})
	if _, err := h.Create("up"); err != nil {
		t.Fatal(err)
	}
	src := newWorkRepo(t, map[string]string{"concierge/agent.yaml": "name: concierge\n", "studybuddy/agent.yaml": "name: studybuddy\n"})
	git(t, src, "push", "-q", url+"/up.git", "main")
	mirror := newBare(t)
	r, err := Open(mirror)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	f := NewFollower(r, mustRemote(t, url+"/up.git"), nil)
	f.Logger = slog.New(slog.NewTextHandler(logs, nil))
	ctx := context.Background()
	if _, err := f.Fetch(ctx); err != nil {
		t.Fatal(err)
	}
	if r.Damage() != nil || strings.Contains(logs.String(), "ERROR") {
		t.Fatalf("a good mirror is damaged: %v\n%s", r.Damage(), logs)
	}
	packs, _ := filepath.Glob(filepath.Join(mirror, "objects", "pack", "pack-*.pack"))
	if len(packs) != 1 {
		t.Fatalf("mirror packs: %v", packs)
	}
	rewrite(t, packs[0], func(b []byte) []byte { return flip(b, int64(len(b))/2, 8) })

	ups, err := f.Fetch(ctx)
	if err != nil {
		t.Fatalf("fetch of a damaged mirror: %v", err)
	}
	log := logs.String()
	for _, want := range []string{
		"level=ERROR msg=\"repository is damaged\" repo=" + mirror + " file=objects/pack/" + filepath.Base(packs[0]),
		"repair=\"it is fetched again from the upstream\"",
		"level=WARN msg=\"moved the damaged mirror aside and fetched it again from the upstream\" repo=" + mirror + " damaged_copy=" + mirror + ".damaged-",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not say %q:\n%s", want, log)
		}
	}
	if len(ups) != 1 || ups[0].Name != "refs/remotes/upstream/main" || !ups[0].Old.IsZero() {
		t.Errorf("the repairing fetch reports %+v, want upstream/main as new", ups)
	}
	if d := r.Damage(); d != nil {
		t.Fatalf("still damaged after the repair: %v", d)
	}
	asides, _ := filepath.Glob(mirror + ".damaged-*")
	if len(asides) != 1 {
		t.Fatalf("damaged copies kept: %v", asides)
	}
	if _, err := os.Stat(mirror + ".refetch"); !os.IsNotExist(err) {
		t.Errorf("the repair's work directory is left: %v", err)
	}
	s, err := r.Snapshot("refs/remotes/upstream/main")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := s.ReadFile("concierge/agent.yaml"); err != nil || string(b) != "name: concierge\n" {
		t.Fatalf("read after the repair: %q, %v", b, err)
	}
	git(t, mirror, "fsck", "--strict", "--no-dangling")

	// A fetch that fails (the upstream is gone) leaves no temporary pack
	// of git's behind.
	tmp := filepath.Join(mirror, "objects", "pack", "tmp_pack_Ab12Cd")
	if err := os.WriteFile(tmp, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.Remote = mustRemote(t, url+"/gone.git")
	if _, err := f.Fetch(ctx); err == nil {
		t.Fatal("a fetch of a missing repository worked")
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Fatalf("a failed fetch left %s: %v", tmp, err)
	}
}
