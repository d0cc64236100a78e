package lsp

import (
	"io/fs"
	"testing"
	"testing/fstest"
)

func TestOverlayReadsBuffersOverDisk(t *testing.T) {
	disk := fstest.MapFS{
		"AGENTS.md":         {Data: []byte("disk agents")},
		"SOUL.md":           {Data: []byte("disk soul")},
		"skills/a/SKILL.md": {Data: []byte("skill")},
	}
	base := newOverlay(disk)
	edited := base.with("SOUL.md", "buffer soul").with("skills/b/SKILL.md", "new skill").with("NEW.md", "unsaved")

	tests := []struct {
		fsys fs.FS
		name string
		want string
	}{
		{base, "SOUL.md", "disk soul"},
		{edited, "SOUL.md", "buffer soul"},
		{edited, "AGENTS.md", "disk agents"},
		{edited, "skills/b/SKILL.md", "new skill"},
		{edited.without("SOUL.md"), "SOUL.md", "disk soul"},
	}
	for _, tt := range tests {
		got, err := fs.ReadFile(tt.fsys, tt.name)
		if err != nil || string(got) != tt.want {
			t.Errorf("ReadFile(%s) = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
	if _, ok := base.buffer("SOUL.md"); ok {
		t.Error("an earlier snapshot changed when a buffer was opened")
	}

	entries, err := fs.ReadDir(edited, "skills")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 2 || names[0] != "a" || names[1] != "b" {
		t.Errorf("ReadDir(skills) = %v, want [a b]", names)
	}
	if err := fstest.TestFS(edited, "AGENTS.md", "SOUL.md", "NEW.md", "skills/a/SKILL.md", "skills/b/SKILL.md"); err != nil {
		t.Error(err)
	}
}

func TestOverlayRejectsInvalidPaths(t *testing.T) {
	o := newOverlay(fstest.MapFS{})
	for _, name := range []string{"../x", "/abs", "a//b"} {
		if _, err := o.Open(name); err == nil {
			t.Errorf("Open(%q) succeeded", name)
		}
	}
}
