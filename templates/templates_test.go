package templates

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quirehq/quire/prompt"
)

func TestEveryTemplateIsWritten(t *testing.T) {
	for _, name := range []string{"AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "USER_PREDEFINED.md", "HEARTBEAT.md", "BOOTSTRAP.md", BootstrapPredefined} {
		b, err := Template(name)
		if err != nil {
			t.Fatal(err)
		}
		if n := len([]rune(string(b))); n < 200 || n > 2500 {
			t.Errorf("%s has %d chars; templates are between 200 and 2,500", name, n)
		}
	}
	soul, _ := Template("SOUL.md")
	for _, h := range []string{"## Core Truths", "## Boundaries", "## Vibe"} {
		if !strings.Contains(string(soul), h) {
			t.Errorf("SOUL.md lacks %q", h)
		}
	}
	for _, name := range []string{"BOOTSTRAP.md", BootstrapPredefined} {
		b, _ := Template(name)
		if !strings.Contains(string(b), "empty") {
			t.Errorf("%s must say that writing it empty ends the first run", name)
		}
	}
}

func TestAgentFilesMakeACleanWorkspace(t *testing.T) {
	for _, typ := range []prompt.AgentType{prompt.TypePredefined, prompt.TypeOpen} {
		dir := t.TempDir()
		if _, err := Seed(dir, AgentFiles("bot", typ)); err != nil {
			t.Fatal(err)
		}
		w, err := prompt.Open(os.DirFS(dir), prompt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if probs := w.Check(); len(probs) > 0 {
			t.Fatalf("%s: a seeded workspace has problems: %v", typ, probs)
		}
		a, _ := w.Agent("")
		if a.Name != "bot" || a.Config.Type != typ {
			t.Fatalf("agent.yaml: %+v", a.Config)
		}
		if _, err := os.Stat(filepath.Join(dir, "BOOTSTRAP.md")); !os.IsNotExist(err) {
			t.Fatalf("BOOTSTRAP.md is per user, never agent-level")
		}
		_, err = os.Stat(filepath.Join(dir, "USER_PREDEFINED.md"))
		if (typ == prompt.TypePredefined) != (err == nil) {
			t.Fatalf("%s: USER_PREDEFINED.md exists=%v", typ, err == nil)
		}
	}
}

func TestSeedNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "SOUL.md")
	if err := os.WriteFile(p, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Seed(dir, AgentFiles("bot", prompt.TypePredefined))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != "mine" {
		t.Fatalf("SOUL.md overwritten: %q", got)
	}
	if len(res.Kept) != 1 || res.Kept[0] != p || len(res.Created) != 7 {
		t.Fatalf("result %+v", res)
	}
	again, err := Seed(dir, AgentFiles("bot", prompt.TypePredefined))
	if err != nil || len(again.Created) != 0 || len(again.Kept) != 8 {
		t.Fatalf("re-seeding creates nothing: %+v %v", again, err)
	}
}

func TestUserFiles(t *testing.T) {
	userTmpl, _ := Template("USER.md")
	bootOpen, _ := Template("BOOTSTRAP.md")
	bootPre, _ := Template(BootstrapPredefined)
	tests := []struct {
		name      string
		typ       prompt.AgentType
		agentUser string
		wantUser  string
		wantBoot  []byte
	}{
		{"predefined with agent USER.md", prompt.TypePredefined, "# Guests\nPrefer Portuguese.\n", "# Guests\nPrefer Portuguese.\n", bootPre},
		{"predefined with blank USER.md", prompt.TypePredefined, " \n", string(userTmpl), bootPre},
		{"predefined without USER.md", prompt.TypePredefined, "", string(userTmpl), bootPre},
		{"open ignores agent USER.md", prompt.TypeOpen, "# shared\n", string(userTmpl), bootOpen},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := UserFiles(tc.typ, []byte(tc.agentUser))
			if len(fs) != 2 || fs[0].Name != "USER.md" || fs[1].Name != "BOOTSTRAP.md" {
				t.Fatalf("files %v", fs)
			}
			if string(fs[0].Content) != tc.wantUser || string(fs[1].Content) != string(tc.wantBoot) {
				t.Fatalf("USER.md %q / BOOTSTRAP.md %.30q", fs[0].Content, fs[1].Content)
			}
		})
	}
}

func TestDeletesWhenEmpty(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    bool
	}{
		{"BOOTSTRAP.md", "", true},
		{"users/alice/BOOTSTRAP.md", " \n\t", true},
		{"BOOTSTRAP.md", "still going", false},
		{"USER.md", "", false},
		{"MEMORY.md", "", false},
	}
	for _, tc := range tests {
		if got := DeletesWhenEmpty(tc.name, []byte(tc.content)); got != tc.want {
			t.Errorf("DeletesWhenEmpty(%q, %q) = %v", tc.name, tc.content, got)
		}
	}
}
