package gitsync

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

func TestChanges(t *testing.T) {
	t.Parallel()
	dir := newWorkRepo(t, map[string]string{"AGENTS.md": "a\n", "memory/a.md": "x\n", "old/name.md": "move me\n", "gone.md": "bye\n"})
	first := git(t, dir, "rev-parse", "HEAD")
	writeFiles(t, dir, map[string]string{"AGENTS.md": "changed\n", "skills/pdf/SKILL.md": "new\n"})
	git(t, dir, "mv", "old/name.md", "new-name.md")
	git(t, dir, "rm", "-q", "gone.md")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "second")
	second := git(t, dir, "rev-parse", "HEAD")
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		from, to string
		want     string
	}{
		{"edit, add, delete, move", first, second, "[{AGENTS.md modified} {gone.md deleted} {new-name.md added} {old/name.md deleted} {skills/pdf/SKILL.md added}]"},
		{"from the empty tree", "", first, "[{AGENTS.md added} {gone.md added} {memory/a.md added} {old/name.md added}]"},
		{"no change", second, second, "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, err := r.Changes(context.Background(), plumbing.NewHash(tt.from), plumbing.NewHash(tt.to))
			if err != nil {
				t.Fatal(err)
			}
			var short []string
			for _, c := range cs {
				short = append(short, fmt.Sprintf("{%s %s}", c.Path, c.Kind))
			}
			if got := "[" + strings.Join(short, " ") + "]"; got != tt.want {
				t.Errorf("Changes = %s\nwant      %s", got, tt.want)
			}
		})
	}
}

// TestExternalGC: a repository repacked by another process (git gc drops
// the loose objects and the old packs go-git indexed) stays readable.
func TestExternalGC(t *testing.T) {
	t.Parallel()
	dir := newWorkRepo(t, map[string]string{"AGENTS.md": "one\n"})
	git(t, dir, "gc", "-q")
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s1, err := r.Snapshot("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s1.ReadDir("."); err != nil { // go-git indexes the first pack now
		t.Fatal(err)
	}
	for i := range 3 {
		writeFiles(t, dir, map[string]string{fmt.Sprintf("memory/%d.md", i): fmt.Sprintf("day %d\n", i)})
		git(t, dir, "add", "-A")
		git(t, dir, "commit", "-q", "-m", "more")
	}
	git(t, dir, "gc", "-q", "--prune=now")
	if m, _ := filepath.Glob(filepath.Join(dir, ".git/objects/??")); len(m) != 0 {
		t.Fatalf("git gc left loose objects: %v", m)
	}
	packs, _ := os.ReadDir(filepath.Join(dir, ".git/objects/pack"))
	t.Logf("packs after gc: %d entries", len(packs))
	s2, err := r.Snapshot("HEAD")
	if err != nil {
		t.Fatalf("snapshot after external gc: %v", err)
	}
	b, err := s2.ReadFile("memory/2.md")
	if err != nil || string(b) != "day 2\n" {
		t.Fatalf("ReadFile after gc = %q, %v", b, err)
	}
	// The old snapshot reads through the new pack as well.
	b, err = s1.ReadFile("AGENTS.md")
	if err != nil || string(b) != "one\n" {
		t.Fatalf("old snapshot ReadFile after gc = %q, %v", b, err)
	}
}
