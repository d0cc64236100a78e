package prompt

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// TestModes: the four modes of the design chapter's later revision. full
// is a main session's prompt; task keeps the persona, tooling, safety,
// skill search and memory recall and leaves out the conversation's parts;
// minimal is a sub-agent's; none is the identity line alone. A request
// without a mode gets its session's default. The task and none prompts
// are golden files (testdata/golden/*-mode-*.txtar; -update rewrites them).
func TestModes(t *testing.T) {
	w, err := Open(os.DirFS("../examples"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Agent: "concierge", User: "ines.carvalho", Session: SessionMain, Channel: ChannelDM, Now: noon, Tools: goldenTools, Skills: goldenSkills}
	type want struct {
		files    string
		has, not []string
	}
	cases := map[Mode]want{
		ModeFull: {"AGENTS.md SOUL.md TOOLS.md IDENTITY.md USER.md USER_PREDEFINED.md HEARTBEAT.md BOOTSTRAP.md MEMORY.md memory/2026-11-21.md memory/2026-11-22.md",
			[]string{"<available_skills>", "## Memory Recall", "\n## User\n", sectionMessaging}, nil},
		ModeTask: {"AGENTS.md SOUL.md TOOLS.md IDENTITY.md",
			[]string{"## Tooling", "## Safety", "## Skills\nThis agent has 2", "## Memory Recall", "## Current Time", "<context_file name=\"SOUL.md\">"},
			[]string{"<available_skills>", "\n## User\n", sectionMessaging, sectionHeartbeats, sectionSilentReplies, "## First Run", "<context_file name=\"MEMORY.md\">", "<context_file name=\"HEARTBEAT.md\">"}},
		ModeMinimal: {"AGENTS.md TOOLS.md",
			[]string{"## Tooling", "## Safety"},
			[]string{"\n## Skills\n", "## Memory Recall", "\n## User\n", "SOUL.md\">"}},
		ModeNone: {"", nil, []string{"## Tooling", "## Safety", "<context_file"}},
	}
	full := assemble(t, w, req)
	for mode, c := range cases {
		r := req
		r.Mode = mode
		res := assemble(t, w, r)
		var names []string
		for _, f := range res.Report.Files {
			names = append(names, f.Name)
		}
		if got := strings.Join(names, " "); got != c.files {
			t.Errorf("%s: files %q, want %q", mode, got, c.files)
		}
		for _, s := range c.has {
			if !strings.Contains(res.Prompt, s) {
				t.Errorf("%s: the prompt lacks %q", mode, s)
			}
		}
		for _, s := range c.not {
			if strings.Contains(res.Prompt, s) {
				t.Errorf("%s: the prompt holds %q", mode, s)
			}
		}
		if !strings.HasPrefix(res.Prompt, "You are Lúcia") || res.Report.Mode != mode {
			t.Errorf("%s: the prompt does not start with the identity, or the report says mode %q", mode, res.Report.Mode)
		}
		if mode == ModeFull && res.Prompt != full.Prompt {
			t.Errorf("mode full differs from a main session's default")
		}
		if mode == ModeNone && res.Prompt != "You are Lúcia, the concierge of Casa Azulejo, a coworking house and guesthouse in Graça, Lisbon.\n" {
			t.Errorf("none: %q, want the identity line alone", res.Prompt)
		}
		if mode == ModeTask || mode == ModeNone {
			checkModeGolden(t, "concierge-ines.carvalho-main-dm-mode-"+string(mode), res)
		}
	}
	cron := req
	cron.Session = SessionCron
	if a, b := assemble(t, w, cron), func() Result { r := cron; r.Mode = ModeMinimal; return assemble(t, w, r) }(); a.Prompt != b.Prompt {
		t.Error("a cron session's default mode is not minimal")
	}
	bad := req
	bad.Mode = "lean"
	if _, err := w.Assemble(bad); err == nil || !strings.Contains(err.Error(), "use full, task, minimal or none") {
		t.Errorf("an unknown mode: %v", err)
	}
}

// checkModeGolden compares res's prompt and report text with the golden
// file name.
func checkModeGolden(t *testing.T, name string, res Result) {
	t.Helper()
	var text bytes.Buffer
	if err := res.Report.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	got := txtar.Format(&txtar.Archive{Files: []txtar.File{{Name: "prompt.txt", Data: []byte(res.Prompt)}, {Name: "report.txt", Data: text.Bytes()}}})
	path := filepath.Join("testdata", "golden", name+".txtar")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./prompt -run TestModes -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the assembled prompt; if the change is intended, run go test ./prompt -update and review the diff\n%s", path, firstDiff(want, got))
	}
}
