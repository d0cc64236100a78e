package skills

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// startWatcher runs a Watcher over the workspace dir until the test ends
// and returns it once its watches are in place.
func startWatcher(t *testing.T, opts Options) *Watcher {
	t.Helper()
	w := NewWatcher(opts, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	select {
	case <-w.started:
	case err := <-done:
		t.Fatalf("Run ended early: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("watcher did not start")
	}
	return w
}

// waitFor polls the watcher's current Set until cond holds.
func waitFor(t *testing.T, w *Watcher, what string, cond func(*Set) bool) *Set {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if s := w.Set(); cond(s) {
			return s
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s (version %d, skills %v)", what, w.Set().Version(), slugs(w.Set().Skills()))
	return nil
}

func description(s *Set, slug string) string {
	if sk, ok := s.Skill(slug); ok {
		return sk.Description
	}
	return ""
}

func TestWatcherAtomicRenameOver(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "skills/pdf/SKILL.md")
	writeFile(t, file, skillMD("pdf", "Old description.", ""))
	w := startWatcher(t, Options{WorkspaceDir: dir, NoBuiltin: true})
	if got := description(w.Set(), "pdf"); got != "Old description." {
		t.Fatalf("initial description %q", got)
	}
	// An editor's atomic save: write a temporary file, rename it over.
	tmp := filepath.Join(dir, "skills/pdf/.SKILL.md.swp")
	writeFile(t, tmp, skillMD("pdf", "New description.", ""))
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
	waitFor(t, w, "the renamed-over SKILL.md", func(s *Set) bool { return description(s, "pdf") == "New description." })
}

func TestWatcherMkdirPThenImmediateWrite(t *testing.T) {
	dir := t.TempDir() // no skills/ yet: the watcher watches the workspace itself
	w := startWatcher(t, Options{WorkspaceDir: dir, NoBuiltin: true})
	if n := len(w.Set().Skills()); n != 0 {
		t.Fatalf("%d skills before any was written", n)
	}
	writeFile(t, filepath.Join(dir, "skills/fresh/SKILL.md"), skillMD("fresh", "Created with mkdir -p.", ""))
	waitFor(t, w, "a skill in a new directory tree", func(s *Set) bool { return description(s, "fresh") == "Created with mkdir -p." })

	// And one in .agents/skills, two levels of new directories at once.
	writeFile(t, filepath.Join(dir, ".agents/skills/other/SKILL.md"), skillMD("other", "Agents dir.", ""))
	waitFor(t, w, "a skill under a new .agents/skills", func(s *Set) bool { return description(s, "other") == "Agents dir." })

	// A later edit inside the new directory is seen too: it is watched.
	writeFile(t, filepath.Join(dir, "skills/fresh/SKILL.md"), skillMD("fresh", "Edited.", ""))
	waitFor(t, w, "an edit in the new directory", func(s *Set) bool { return description(s, "fresh") == "Edited." })
}

func TestWatcherDeletion(t *testing.T) {
	dir := t.TempDir()
	home := t.TempDir()
	writeFile(t, filepath.Join(dir, "skills/pdf/SKILL.md"), skillMD("pdf", "Workspace.", ""))
	writeFile(t, filepath.Join(home, ".agents/skills/pdf/SKILL.md"), skillMD("pdf", "Home.", ""))
	writeFile(t, filepath.Join(dir, "skills/gone/SKILL.md"), skillMD("gone", "Soon deleted.", ""))
	w := startWatcher(t, Options{WorkspaceDir: dir, HomeDir: home, NoBuiltin: true})
	if err := os.RemoveAll(filepath.Join(dir, "skills/gone")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, w, "the deleted skill to vanish", func(s *Set) bool { _, ok := s.Skill("gone"); return !ok })
	// Deleting the workspace copy uncovers the shadowed home copy.
	if err := os.Remove(filepath.Join(dir, "skills/pdf/SKILL.md")); err != nil {
		t.Fatal(err)
	}
	s := waitFor(t, w, "the home copy to take over", func(s *Set) bool { return description(s, "pdf") == "Home." })
	if len(s.Shadows()) != 0 {
		t.Errorf("shadows after deletion: %v", s.Shadows())
	}
}

func TestWatcherBurstIsOneReload(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "skills/pdf/SKILL.md")
	writeFile(t, file, skillMD("pdf", "Edit 0.", ""))
	w := startWatcher(t, Options{WorkspaceDir: dir, NoBuiltin: true})
	before := w.Set().Version()
	for i := 1; i <= 100; i++ {
		writeFile(t, file, skillMD("pdf", fmt.Sprintf("Edit %d.", i), ""))
		time.Sleep(time.Millisecond)
	}
	s := waitFor(t, w, "the burst to be loaded", func(s *Set) bool { return s.Version() > before })
	if got := description(s, "pdf"); got != "Edit 100." {
		t.Errorf("after the burst: %q, want the last edit", got)
	}
	time.Sleep(Debounce + 300*time.Millisecond)
	if v := w.Set().Version(); v != before+1 {
		t.Errorf("100 edits caused %d reloads, want 1", v-before)
	}
}

func TestWatcherIgnoresGit(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "skills/pdf/SKILL.md"), skillMD("pdf", "x.", ""))
	if err := os.MkdirAll(filepath.Join(dir, "skills/.git/objects"), 0o755); err != nil {
		t.Fatal(err)
	}
	w := startWatcher(t, Options{WorkspaceDir: dir, NoBuiltin: true})
	before := w.Set().Version()
	writeFile(t, filepath.Join(dir, "skills/.git/objects/ab"), "blob")
	writeFile(t, filepath.Join(dir, "skills/.git/index"), "index")
	time.Sleep(Debounce + 300*time.Millisecond)
	if v := w.Set().Version(); v != before {
		t.Errorf("writes under .git caused %d reloads", v-before)
	}
}

// The policy: what lies in a .git directory inside a tier is not a
// change of a skill. (Which events reach it, from a tier or from above a
// missing one, is the shared watcher's, tested in internal/fswatch.)
func TestInGit(t *testing.T) {
	roots := []string{"/ws/skills", "/ws/.agents/skills", "/home/u/.agents/skills"}
	tests := []struct {
		path string
		want bool
	}{
		{"/ws/skills/pdf/SKILL.md", false},
		{"/ws/skills/pdf/.git/index", true},
		{"/ws/skills/.git", true},
		{"/ws/skills", false},
		{"/ws/.agents", false},
		{"/home/u/.agents/skills/x/.git/HEAD", true},
		{"/ws/skills/pdf/.gitignore", false},
		{"/ws/.git/objects/ab", false}, // outside every tier: the watcher never watches it
	}
	for _, tt := range tests {
		if got := inGit(filepath.FromSlash(tt.path), roots); got != tt.want {
			t.Errorf("inGit(%s) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

func TestSetNeverTouchesDisk(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "skills/pdf/SKILL.md"), skillMD("pdf", "Convert PDFs.", "Body {baseDir}\n"))
	w := NewWatcher(Options{WorkspaceDir: dir, NoBuiltin: true}, nil)
	set := w.Set()
	if err := os.RemoveAll(filepath.Join(dir, "skills")); err != nil {
		t.Fatal(err)
	}
	// Without Run nothing reloads: the Set still answers from memory.
	if got := set.PromptSkills(Request{}); len(got) != 1 || got[0].Name != "pdf" {
		t.Errorf("PromptSkills after the files vanished = %v", got)
	}
	if hits := set.Search("pdfs", Request{}, 0, nil); len(hits) != 1 {
		t.Errorf("Search after the files vanished = %v", hits)
	}
	if sk, ok := set.Show(Request{}, "pdf"); !ok || sk.ResolvedBody() != "Body "+filepath.Join(dir, "skills/pdf")+"\n" {
		t.Errorf("Show after the files vanished = %v", sk)
	}
	if w.Set() != set {
		t.Errorf("the current Set changed without a reload")
	}
}

// A rescan (what the shared watcher does after its event queue
// overflowed) reloads every tier once; watching goes on after.
func TestWatcherRescanReloads(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "skills/pdf/SKILL.md"), skillMD("pdf", "x.", ""))
	w := startWatcher(t, Options{WorkspaceDir: dir, NoBuiltin: true})
	before := w.Set().Version()
	w.core.Rescan() // w.core was set before started was closed
	waitFor(t, w, "the reload after a rescan", func(s *Set) bool { return s.Version() == before+1 })
	writeFile(t, filepath.Join(dir, "skills/pdf/SKILL.md"), skillMD("pdf", "Seen again.", ""))
	waitFor(t, w, "an edit after the rescan", func(s *Set) bool { return description(s, "pdf") == "Seen again." })
}
