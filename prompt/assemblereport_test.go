package prompt

import (
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/quirehq/quire/workspace"
)

// TestAssembleReportIsAssembles: on the golden workspaces (../examples and
// testdata/teams), for the golden requests and more (every mode, a room,
// no clock), AssembleReport gives Assemble's report less what only
// rendering computes, whether it builds the plan (a workspace of its
// own, asked first) or reuses the one Assemble built.
func TestAssembleReportIsAssembles(t *testing.T) {
	type workspaceCase struct {
		open func() (*Workspace, error)
		reqs []Request
	}
	examples := func() (*Workspace, error) { return Open(os.DirFS("../examples"), Options{}) }
	teams := func() (*Workspace, error) { return Open(workspace.DirFS("testdata/teams"), Options{}) }
	var exampleReqs []Request
	for _, r := range []Request{
		{Agent: "concierge"},
		{Agent: "concierge", User: "ines.carvalho"},
		{Agent: "concierge", User: "ines.carvalho", Channel: ChannelGroup},
		{Agent: "concierge", User: "ines.carvalho", Channel: ChannelGroup, Room: "lobby"},
		{Agent: "concierge", User: "ines.carvalho", Session: SessionSubagent},
		{Agent: "concierge", User: "ines.carvalho", Session: SessionCron},
		{Agent: "concierge", User: "tg-5512093311"},
		{Agent: "studybuddy", User: "alice"},
		{Agent: "studybuddy", User: "alice", Channel: ChannelGroup},
		{Agent: "studybuddy", User: "alice", Session: SessionSubagent},
		{Agent: "studybuddy", User: "bob@example.com"},
		{Agent: "studybuddy", User: "bob@example.com", Session: SessionCron, Channel: ChannelGroup},
	} {
		for _, mode := range []Mode{"", ModeFull, ModeTask, ModeMinimal, ModeNone} {
			for _, now := range []time.Time{noon, {}} {
				r.Mode, r.Now, r.Tools, r.Skills, r.CountPromptTokens = mode, now, goldenTools, goldenSkills, true
				exampleReqs = append(exampleReqs, r)
			}
		}
	}
	var teamReqs []Request
	for _, r := range []Request{
		{Agent: "concierge"},
		{Agent: "concierge", Channel: ChannelGroup},
		{Agent: "concierge", Session: SessionSubagent},
		{Agent: "concierge", User: "new-guest"},
		{Agent: "concierge", VirtualFiles: []VirtualFile{{Name: workspace.TeamFile, Content: "Supplied by the caller."}}},
		{Agent: "night-porter"},
		{Agent: "night-porter", ContextWindow: 1000, ContextShare: 0.2},
		{Agent: "tutor"},
	} {
		r.Now, r.Tools, r.CountPromptTokens = noon, goldenTools, true
		teamReqs = append(teamReqs, r)
	}
	for name, c := range map[string]workspaceCase{"examples": {examples, exampleReqs}, "teams": {teams, teamReqs}} {
		t.Run(name, func(t *testing.T) {
			first, err := c.open()
			if err != nil {
				t.Fatal(err)
			}
			var reports []Report
			for _, req := range c.reqs {
				rep, err := first.AssembleReport(req)
				if err != nil {
					t.Fatalf("%+v: %v", req, err)
				}
				reports = append(reports, rep)
			}
			w, err := c.open()
			if err != nil {
				t.Fatal(err)
			}
			for i, req := range c.reqs {
				want := withoutRendering(assemble(t, w, req).Report)
				if !reflect.DeepEqual(reports[i], want) {
					t.Errorf("%+v: AssembleReport on a workspace of its own gives\n%+v\nwant\n%+v", req, reports[i], want)
				}
				if again, err := w.AssembleReport(req); err != nil || !reflect.DeepEqual(again, want) {
					t.Errorf("%+v: AssembleReport after Assemble gives\n%+v, %v\nwant\n%+v", req, again, err, want)
				}
			}
		})
	}
}

// TestAssembleReportErrors: a request Assemble refuses, AssembleReport
// refuses with the same error.
func TestAssembleReportErrors(t *testing.T) {
	w, err := Open(os.DirFS("../examples"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []Request{
		{Agent: "nobody"},
		{Agent: "concierge", Session: "lunch"},
		{Agent: "concierge", Mode: "loud"},
		{Agent: "concierge", Channel: "fax"},
		{Agent: "concierge", User: "a\nb"},
		{Agent: "concierge", Room: "lobby"},
		{Agent: "concierge", ContextWindow: -1},
	} {
		_, want := w.Assemble(req)
		_, got := w.AssembleReport(req)
		if want == nil || got == nil || got.Error() != want.Error() {
			t.Errorf("%+v: AssembleReport's error %v, Assemble's %v", req, got, want)
		}
	}
}

// withoutRendering is rep less what AssembleReport leaves zero.
func withoutRendering(rep Report) Report {
	rep.PromptBytes, rep.PromptChars, rep.PromptTokens, rep.StablePrefixBytes = 0, 0, 0, 0
	rep.SkillsMode, rep.SkillCount, rep.SkillsReason = "", 0, ""
	rep.Virtual = nil
	return rep
}
