package gitsync

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// TestOverlayThinPack: a thin pack, quarantined by receivePack, (deltas against objects the receiver
// already has) resolves through the repository; the same pack against an
// empty repository does not, which shows the pack really is thin.
func TestOverlayThinPack(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("a line of a long memory file that deltas well\n", 1000)
	work := newWorkRepo(t, map[string]string{"MEMORY.md": big})
	first := git(t, work, "rev-parse", "HEAD")
	server := filepath.Join(t.TempDir(), "s.git")
	git(t, work, "clone", "-q", "--bare", work, server)
	second := commitFiles(t, work, map[string]string{"MEMORY.md": big + "one more\n"}, "second")

	cmd := exec.Command("git", "pack-objects", "--thin", "--stdout", "--revs", "-q")
	cmd.Dir = work
	cmd.Stdin = strings.NewReader(second + "\n^" + first + "\n")
	pack, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(server)
	if err != nil {
		t.Fatal(err)
	}
	q, err := receivePack(context.Background(), r, bytes.NewReader(pack), 1<<20)
	if err != nil {
		t.Fatalf("thin pack against the repository: %v", err)
	}
	defer q.close()
	ov := newOverlay(r, q)
	s, err := ov.snapshot(plumbing.NewHash(second))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := s.ReadFile("MEMORY.md"); err != nil || string(b) != big+"one more\n" {
		t.Fatalf("ReadFile through the overlay: %d bytes, %v", len(b), err)
	}
	// Nothing was written to the repository.
	if err := r.locked(func(st storer.EncodedObjectStorer) error { return st.HasEncodedObject(plumbing.NewHash(second)) }); err == nil {
		t.Fatal("parsing the pack wrote the commit to the repository")
	}

	empty, err := Open(newBare(t))
	if err != nil {
		t.Fatal(err)
	}
	if q, err := receivePack(context.Background(), empty, bytes.NewReader(pack), 1<<20); err == nil {
		q.close()
		t.Fatal("the pack resolved without the repository: it is not thin")
	}
	// The size limit applies while the pack arrives.
	if q, err := receivePack(context.Background(), r, bytes.NewReader(pack), 100); err == nil {
		q.close()
		t.Fatal("a pack over the limit was accepted")
	}
	// Nothing is left behind.
	q.close()
	if ms, _ := filepath.Glob(filepath.Join(server, quarantinePrefix+"*")); len(ms) != 0 {
		t.Fatalf("quarantines left: %v", ms)
	}
}
