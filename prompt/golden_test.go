package prompt

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/quirehq/quire/workspace"
	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/golden")

// goldenTools and goldenSkills stand in for what a chat client and the
// skills package supply, so the golden prompts show those sections too.
var (
	goldenTools = []Tool{
		{Name: "read_file", Description: "Read a file from the workspace."},
		{Name: "memory_search", Description: "Search MEMORY.md and the daily logs."},
		{Name: "memory_append", Description: "Append an entry to today's daily log."},
	}
	goldenSkills = []Skill{
		{Name: "memory-writing", Description: "How to decide what is worth remembering & where it goes.", Location: "/skills/memory-writing/SKILL.md"},
		{Name: "daily-log-hygiene", Description: "Keep memory/YYYY-MM-DD.md short, dated and <useful>.", Location: "/skills/daily-log-hygiene/SKILL.md"},
	}
)

// TestGoldenExamples assembles the bundled example workspace for each
// agent type, session and channel, and compares prompt and report with
// testdata/golden. Run `go test ./prompt -update` after an intended change
// and read the diff.
func TestGoldenExamples(t *testing.T) {
	w, err := Open(os.DirFS("../examples"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The CLI, the language server and the daemon's --dir source read
	// through workspace.Dir: the same bytes.
	viaDir, err := Open(workspace.DirFS("../examples"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		agent, user string
		session     Session
		channel     Channel
		room        string
	}{
		{"concierge", "", SessionMain, ChannelDM, ""},
		{"concierge", "ines.carvalho", SessionMain, ChannelDM, ""},
		{"concierge", "ines.carvalho", SessionMain, ChannelGroup, ""},
		{"concierge", "ines.carvalho", SessionSubagent, ChannelDM, ""},
		{"concierge", "ines.carvalho", SessionCron, ChannelDM, ""},
		{"concierge", "tg-5512093311", SessionMain, ChannelDM, ""},
		{"studybuddy", "alice", SessionMain, ChannelDM, ""},
		{"studybuddy", "alice", SessionMain, ChannelGroup, ""},
		{"studybuddy", "alice", SessionSubagent, ChannelDM, ""},
		{"studybuddy", "bob@example.com", SessionMain, ChannelDM, ""},
		{"studybuddy", "bob@example.com", SessionCron, ChannelGroup, ""},
	}
	for _, c := range cases {
		user := c.user
		if user == "" {
			user = "nouser"
		}
		id, _ := workspace.EncodeID(user)
		name := fmt.Sprintf("%s-%s-%s-%s", c.agent, id, c.session, c.channel)
		t.Run(name, func(t *testing.T) {
			res := assemble(t, w, Request{Agent: c.agent, User: c.user, Session: c.session, Channel: c.channel, Room: c.room,
				Now: noon, Tools: goldenTools, Skills: goldenSkills, CountPromptTokens: true})
			rep, err := json.MarshalIndent(res.Report, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			other := assemble(t, viaDir, Request{Agent: c.agent, User: c.user, Session: c.session, Channel: c.channel, Room: c.room,
				Now: noon, Tools: goldenTools, Skills: goldenSkills, CountPromptTokens: true})
			if otherRep, _ := json.MarshalIndent(other.Report, "", "  "); other.Prompt != res.Prompt || !bytes.Equal(otherRep, rep) {
				t.Errorf("through workspace.Dir the prompt or report differs from os.DirFS's")
			}
			var text bytes.Buffer
			if err := res.Report.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			got := txtar.Format(&txtar.Archive{
				Comment: []byte(fmt.Sprintf("agent=%s user=%q session=%s channel=%s now=%s\n", c.agent, c.user, c.session, c.channel, noon.Format("2006-01-02T15:04:05Z07:00"))),
				Files: []txtar.File{
					{Name: "prompt.txt", Data: []byte(res.Prompt)},
					{Name: "report.txt", Data: text.Bytes()},
					{Name: "report.json", Data: append(rep, '\n')},
				},
			})
			path := filepath.Join("testdata", "golden", name+".txtar")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./prompt -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the assembled prompt; if the change is intended, run go test ./prompt -update and review the diff\n%s", path, firstDiff(want, got))
			}
		})
	}
}

// firstDiff shows the first line where want and got differ.
func firstDiff(want, got []byte) string {
	wl, gl := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g []byte
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if !bytes.Equal(w, g) {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, w, g)
		}
	}
	return ""
}
