package prompt

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/quirehq/quire/workspace"
)

var noon = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func names(rep Report, statuses ...Status) []string {
	var out []string
	for _, f := range rep.Files {
		for _, s := range statuses {
			if f.Status == s {
				out = append(out, f.Name)
			}
		}
	}
	return out
}

func allFiles() map[string]string {
	files := map[string]string{}
	for _, n := range []string{workspace.AgentsFile, workspace.SoulFile, workspace.ToolsFile, workspace.IdentityFile, workspace.UserFile, workspace.UserPredefinedFile, workspace.HeartbeatFile, workspace.MemoryFile,
		"memory/2026-11-20.md", "memory/2026-11-21.md", "memory/2026-11-22.md", "rooms/lobby.md"} {
		files[n] = "content of " + n + "\n"
	}
	files["users/u1/"+workspace.BootstrapFile] = "first run\n"
	files["users/u1/"+workspace.UserFile] = "user one\n"
	return files
}

func TestSessionFiles(t *testing.T) {
	w := openMap(t, allFiles(), "")
	full := []string{workspace.AgentsFile, workspace.SoulFile, workspace.ToolsFile, workspace.IdentityFile, workspace.UserFile, workspace.UserPredefinedFile, workspace.HeartbeatFile}
	tests := []struct {
		session Session
		channel Channel
		room    string
		want    []string
	}{
		{SessionMain, ChannelDM, "", append(append([]string{}, full...), workspace.BootstrapFile, workspace.MemoryFile, "memory/2026-11-21.md", "memory/2026-11-22.md")},
		{SessionMain, ChannelGroup, "", append(append([]string{}, full...), "memory/2026-11-21.md", "memory/2026-11-22.md")},
		{SessionMain, ChannelGroup, "lobby", append(append(append([]string{}, full[:6]...), "rooms/lobby.md", workspace.HeartbeatFile), "memory/2026-11-21.md", "memory/2026-11-22.md")},
		{SessionSubagent, ChannelDM, "", []string{workspace.AgentsFile, workspace.ToolsFile}},
		{SessionCron, ChannelGroup, "", []string{workspace.AgentsFile, workspace.ToolsFile}},
	}
	for _, tc := range tests {
		t.Run(string(tc.session)+"-"+string(tc.channel)+tc.room, func(t *testing.T) {
			rep := assemble(t, w, Request{User: "u1", Session: tc.session, Channel: tc.channel, Room: tc.room, Now: noon}).Report
			got := names(rep, StatusFull)
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("files\n got %v\nwant %v", got, tc.want)
			}
		})
	}
}

// GoClaw defect: the minimal allow list (AGENTS.md and TOOLS.md for
// sub-agents and cron) was never applied.
func TestDefectMinimalAllowListNotApplied(t *testing.T) {
	w := openMap(t, allFiles(), "")
	for _, s := range []Session{SessionSubagent, SessionCron} {
		res := assemble(t, w, Request{User: "u1", Session: s, Now: noon})
		for _, n := range []string{workspace.SoulFile, workspace.IdentityFile, workspace.UserFile, workspace.MemoryFile, workspace.BootstrapFile, workspace.HeartbeatFile} {
			if strings.Contains(res.Prompt, "content of "+n) || strings.Contains(res.Prompt, `name="`+n+`"`) {
				t.Fatalf("%s session includes %s", s, n)
			}
		}
		for _, section := range []string{"## Skills", "## Memory Recall", "## User", "## Messaging", "## Silent Replies", "## Heartbeats", "## First Run"} {
			if strings.Contains(res.Prompt, section) {
				t.Fatalf("%s session (minimal) has section %q", s, section)
			}
		}
		if !strings.Contains(res.Prompt, "content of AGENTS.md") || !strings.Contains(res.Prompt, "content of TOOLS.md") {
			t.Fatalf("%s session lacks AGENTS.md or TOOLS.md", s)
		}
	}
}

func TestPerUserMerge(t *testing.T) {
	files := map[string]string{
		workspace.AgentsFile:                  "base agents\n",
		workspace.SoulFile:                    "base soul\n",
		workspace.BootstrapFile:               "base bootstrap\n",
		"users/u1/" + workspace.SoulFile:      "u1 soul\n",
		"users/u1/" + workspace.UserFile:      "u1 user\n",
		"users/u2/" + workspace.BootstrapFile: "u2 bootstrap\n",
	}
	t.Run("open", func(t *testing.T) {
		w := openMap(t, files, "type: open\n")
		p := assemble(t, w, Request{User: "u1"}).Prompt
		for _, want := range []string{"base agents", "u1 soul", "u1 user"} {
			if !strings.Contains(p, want) {
				t.Fatalf("missing %q", want)
			}
		}
		if strings.Contains(p, "base soul") {
			t.Fatalf("the user's SOUL.md must override the base one")
		}
		if strings.Contains(p, "base bootstrap") {
			t.Fatalf("a user without BOOTSTRAP.md must not fall back to a shared one (the first run would never end)")
		}
		if p2 := assemble(t, w, Request{User: "u2"}).Prompt; !strings.Contains(p2, "u2 bootstrap") || !strings.Contains(p2, "base soul") {
			t.Fatalf("u2 gets the base SOUL.md and their own BOOTSTRAP.md")
		}
	})
	t.Run("predefined", func(t *testing.T) {
		w := openMap(t, files, "type: predefined\n")
		p := assemble(t, w, Request{User: "u1"}).Prompt
		if !strings.Contains(p, "base soul") || strings.Contains(p, "u1 soul") {
			t.Fatalf("predefined agents share SOUL.md; a user's copy is ignored")
		}
		if !strings.Contains(p, "u1 user") {
			t.Fatalf("each user has their own USER.md")
		}
		probs := w.Check()
		found := false
		for _, pr := range probs {
			found = found || pr.Code == "user-persona-ignored" && pr.Path == "a/users/u1/SOUL.md"
		}
		if !found {
			t.Fatalf("check must warn that users/u1/SOUL.md is ignored: %v", probs)
		}
	})
}

func TestMemoryFallback(t *testing.T) {
	w := openMap(t, map[string]string{"memory.md": "lower-case memory\n"}, "")
	rep := assemble(t, w, Request{}).Report
	f, ok := rep.File(workspace.MemoryFile)
	if !ok || f.Status != StatusFull || f.Path != "a/memory.md" {
		t.Fatalf("memory.md must stand in for a missing MEMORY.md: %+v", f)
	}
}

func TestBootstrapFirstRunAndVirtualFiles(t *testing.T) {
	w := openMap(t, map[string]string{"users/new/" + workspace.BootstrapFile: "ritual\n", "users/old/" + workspace.UserFile: "known\n"}, "")
	vf := []VirtualFile{{Name: "TEAM.md", Content: "team <b>"}}
	p := assemble(t, w, Request{User: "new", VirtualFiles: vf}).Prompt
	if !strings.Contains(p, "## First Run") || strings.Contains(p, "TEAM.md") {
		t.Fatalf("with BOOTSTRAP.md: first-run section, no virtual files")
	}
	res := assemble(t, w, Request{User: "old", VirtualFiles: vf})
	if strings.Contains(res.Prompt, "## First Run") || !strings.Contains(res.Prompt, "<system_context name=\"TEAM.md\">\nteam <b>\n</system_context>") {
		t.Fatalf("without BOOTSTRAP.md: virtual files in <system_context>:\n%s", res.Prompt)
	}
	if res.Report.InjectedChars != len("known\n") {
		t.Fatalf("virtual files are not charged to the budget: injected %d", res.Report.InjectedChars)
	}
}

func TestDailyLogsFollowAgentTimezone(t *testing.T) {
	files := map[string]string{"memory/2026-11-21.md": "d21\n", "memory/2026-11-22.md": "d22\n", "memory/2026-11-23.md": "d23\n"}
	w := openMap(t, files, "timezone: Asia/Tokyo\n")
	late := time.Date(2026, 11, 22, 23, 30, 0, 0, time.UTC) // already the 23rd in Tokyo
	p := assemble(t, w, Request{Now: late}).Prompt
	if !strings.Contains(p, "d22") || !strings.Contains(p, "d23") || strings.Contains(p, "d21") {
		t.Fatalf("want yesterday (22) and today (23) in Tokyo")
	}
	if !strings.Contains(p, "Today is Monday, 2026-11-23 (Asia/Tokyo).") {
		t.Fatalf("current time not in the agent's zone")
	}
	if p := assemble(t, w, Request{}).Prompt; strings.Contains(p, "d22") || strings.Contains(p, "## Current Time") {
		t.Fatalf("without Now there is no date and no daily log")
	}
}

func TestOrderDecidesWhoIsCharged(t *testing.T) {
	files := map[string]string{workspace.AgentsFile: strings.Repeat("a", 900), workspace.SoulFile: strings.Repeat("s", 900)}
	w := openMap(t, files, "budget: {total: 1000, per_file: 1000}\norder: [SOUL.md]\n")
	res := assemble(t, w, Request{})
	soul, _ := res.Report.File(workspace.SoulFile)
	agents, _ := res.Report.File(workspace.AgentsFile)
	if soul.Status != StatusFull || soul.Order != 1 || agents.Status != StatusClamped || agents.UsedBy[0] != workspace.SoulFile {
		t.Fatalf("SOUL.md is charged first: soul %+v agents %+v", soul, agents)
	}
	if strings.Index(res.Prompt, `name="AGENTS.md"`) > strings.Index(res.Prompt, `name="SOUL.md"`) {
		t.Fatalf("order changes the charging, not the prompt order")
	}
}

func TestMinimumFileBudgetStops(t *testing.T) {
	files := map[string]string{workspace.AgentsFile: strings.Repeat("a", 970), workspace.SoulFile: "short soul\n", workspace.ToolsFile: "tools\n"}
	w := openMap(t, files, "budget: {total: 1000, per_file: 1000, min_file: 64}\n")
	rep := assemble(t, w, Request{}).Report
	for _, n := range []string{workspace.SoulFile, workspace.ToolsFile} {
		f, _ := rep.File(n)
		if f.Status != StatusDropped || f.InjectedChars != 0 || len(f.UsedBy) != 1 || f.UsedBy[0] != workspace.AgentsFile {
			t.Fatalf("%s: %+v; want dropped once less than 64 chars remain", n, f)
		}
	}
}

func TestRejectPolicyIsAnError(t *testing.T) {
	w := openMap(t, map[string]string{workspace.SoulFile: strings.Repeat("x", 150)}, "policy: reject\nbudget: {per_file: 100}\n")
	res := assemble(t, w, Request{})
	if !workspace.HasErrors(res.Report.Problems) || !strings.Contains(res.Report.Problems[0].Message, "per-file budget is 100") {
		t.Fatalf("want a reject error naming the limit, got %v", res.Report.Problems)
	}
	if f, _ := res.Report.File(workspace.SoulFile); !f.OverBudget || f.Status != StatusTruncated {
		t.Fatalf("the prompt still truncates, and says the file is over budget: %+v", f)
	}
	if !workspace.HasErrors(w.Check()) {
		t.Fatalf("check must fail")
	}
}

func TestMissingDirectory(t *testing.T) {
	_, err := Open(os.DirFS("/no/such/quire/workspace"), Options{})
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("want a not-exist error, got %v", err)
	}
}

func TestUnknownAgentAndBadRequest(t *testing.T) {
	w := openMap(t, nil, "")
	for _, req := range []Request{{Agent: "nope"}, {Session: "batch"}, {Channel: "email"}, {User: ""}, {Room: "r"}} {
		_, err := w.Assemble(req)
		if req.User == "" && req.Agent == "" && req.Session == "" && req.Channel == "" && req.Room == "" {
			if err != nil {
				t.Fatalf("empty request: %v", err)
			}
			continue
		}
		if err == nil {
			t.Fatalf("%+v: want an error", req)
		}
	}
}

// A user id is opaque: "../../etc" must read users/<encoded>/, never a
// path outside the user's directory.
func TestUserIDCannotEscape(t *testing.T) {
	fsys := fstest.MapFS{
		"a/agent.yaml":    {Data: []byte("type: open\n")},
		"etc/USER.md":     {Data: []byte("SECRET\n")},
		"a/etc/USER.md":   {Data: []byte("SECRET2\n")},
		"a/users/x.md":    {Data: []byte("SECRET3\n")},
		"a/users/USER.md": {Data: []byte("SECRET4\n")},
	}
	w, err := Open(fsys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"../../etc", "../etc", "..", ".", "/etc", "x.md/..", "USER.md/.."} {
		res, err := w.Assemble(Request{User: id})
		if err != nil {
			continue // refusing is fine too
		}
		if strings.Contains(res.Prompt, "SECRET") {
			t.Fatalf("user %q read a file outside their directory", id)
		}
	}
}

func TestInvalidUTF8(t *testing.T) {
	w := openMap(t, map[string]string{workspace.SoulFile: "caf\xe9 ok \xff\xfe\n"}, "")
	res := assemble(t, w, Request{})
	f, _ := res.Report.File(workspace.SoulFile)
	if f.InvalidBytes != 3 || f.OriginalChars != len("caf ok \n")+3 {
		t.Fatalf("want 3 invalid bytes counted as one char each: %+v", f)
	}
	if !strings.Contains(res.Prompt, "caf\uFFFD ok \uFFFD\uFFFD") {
		t.Fatalf("invalid bytes must reach the prompt as U+FFFD")
	}
	found := false
	for _, p := range w.Check() {
		found = found || p.Code == "invalid-utf8" && p.Severity == workspace.SeverityWarning
	}
	if !found {
		t.Fatalf("check must warn about invalid UTF-8")
	}
}

// hugeFS serves a SOUL.md of size bytes generated on the fly, so the test
// itself does not hold it in memory.
type hugeFS struct {
	fstest.MapFS
	size int64
}

type hugeFile struct {
	fs.File
	size, off int64
}

func (h hugeFS) Open(name string) (fs.File, error) {
	if name != "a/SOUL.md" {
		return h.MapFS.Open(name)
	}
	f, err := h.MapFS.Open(name)
	if err != nil {
		return nil, err
	}
	return &hugeFile{File: f, size: h.size}, nil
}

func (f *hugeFile) Stat() (fs.FileInfo, error) { return hugeInfo{f.size}, nil }
func (f *hugeFile) Read(p []byte) (int, error) {
	if f.off >= f.size {
		return 0, io.EOF
	}
	n := int64(len(p))
	if n > f.size-f.off {
		n = f.size - f.off
	}
	for i := int64(0); i < n; i++ {
		if (f.off+i)%64 == 63 {
			p[i] = '\n'
		} else {
			p[i] = 'a' + byte((f.off+i)%26)
		}
	}
	f.off += n
	return int(n), nil
}

type hugeInfo struct{ size int64 }

func (h hugeInfo) Name() string       { return "SOUL.md" }
func (h hugeInfo) Size() int64        { return h.size }
func (h hugeInfo) Mode() fs.FileMode  { return 0o644 }
func (h hugeInfo) ModTime() time.Time { return time.Time{} }
func (h hugeInfo) IsDir() bool        { return false }
func (h hugeInfo) Sys() any           { return nil }

func TestHundredMegabyteSoul(t *testing.T) {
	const size = 100 << 20
	fsys := hugeFS{MapFS: fstest.MapFS{"a/agent.yaml": {Data: nil}, "a/SOUL.md": {Data: nil}}, size: size}
	w, err := Open(fsys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res := assemble(t, w, Request{})
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Fatalf("assembling a 100 MB SOUL.md allocated %d MB; it must stream, not hold the file", alloc>>20)
	}
	f, _ := res.Report.File(workspace.SoulFile)
	if f.OriginalBytes != size || f.OriginalChars != size || !f.OriginalTokensEstimated || f.Status != StatusTruncated || f.InjectedChars > 20000 {
		t.Fatalf("report: %+v", f)
	}
	if f.Dropped[0].End.Line == 0 || f.Dropped[0].Start.Offset >= f.Dropped[0].End.Offset {
		t.Fatalf("dropped range: %+v", f.Dropped)
	}
	if !strings.Contains(res.Prompt, "of 104,857,600 chars)") {
		t.Fatalf("the marker must state the whole file's size")
	}
	found := false
	for _, p := range w.Check() {
		found = found || p.Code == "file-too-large"
	}
	if !found {
		t.Fatalf("check must report a file over 1 MiB")
	}
}

func TestDeterministicAndStablePrefix(t *testing.T) {
	open := func() *Workspace { return openMap(t, allFiles(), "") }
	req := Request{User: "u1", Now: noon, Tools: []Tool{{"read", "read a file"}}, Skills: []Skill{{Name: "s", Description: "d", Location: "/x"}}}
	a, b := assemble(t, open(), req), assemble(t, open(), req)
	if a.Prompt != b.Prompt {
		t.Fatalf("same inputs, different bytes")
	}
	other := req
	other.User, other.Now, other.Extra = "u2", noon.Add(48*time.Hour), "extra"
	c := assemble(t, open(), other)
	n := a.Report.StablePrefixBytes
	if n <= 0 || n > len(a.Prompt) || a.Prompt[:n] != c.Prompt[:n] {
		t.Fatalf("stable prefix of %d bytes differs between users and days", n)
	}
	if !strings.HasSuffix(a.Prompt[:n], "\n") {
		t.Fatalf("the stable prefix should end at a section boundary")
	}
}

func TestSkillsInlineOrSearch(t *testing.T) {
	w := openMap(t, nil, "")
	skills := make([]Skill, 21)
	for i := range skills {
		skills[i] = Skill{Name: "s" + string(rune('a'+i)), Description: `use <when> & "why"`, Location: "/skills/x/SKILL.md"}
	}
	res := assemble(t, w, Request{Skills: skills[:20]})
	if res.Report.SkillsMode != "inline" || !strings.Contains(res.Prompt, "<description>use &lt;when&gt; &amp; &quot;why&quot;</description>") {
		t.Fatalf("20 skills are listed inline, escaped")
	}
	res = assemble(t, w, Request{Skills: skills})
	if res.Report.SkillsMode != "search" || strings.Contains(res.Prompt, "<available_skills>") || !strings.Contains(res.Prompt, "This agent has 21 skills") {
		t.Fatalf("21 skills: point at skill search")
	}
	long := []Skill{{Name: "big", Description: strings.Repeat("d", 14001)}}
	if res = assemble(t, w, Request{Skills: long}); res.Report.SkillsMode != "search" {
		t.Fatalf("over 3,500 estimated tokens: skill search")
	}
	if res = assemble(t, w, Request{Skills: skills[:3], Session: SessionCron}); res.Report.SkillsMode != "none" || res.Report.SkillsReason != "" {
		t.Fatalf("minimal prompts have no skills section")
	}
}

// Built-in skills do not count toward the inline rule (issue 17): 20 of the
// agent's own plus 3 built-in are listed inline, 21 of its own are not; the
// report says why either way.
func TestBuiltinSkillsDoNotCount(t *testing.T) {
	w := openMap(t, nil, "")
	own := make([]Skill, 21)
	for i := range own {
		own[i] = Skill{Name: fmt.Sprintf("own-%02d", i), Description: "Use when asked.", Location: "skills/x/SKILL.md"}
	}
	builtin := []Skill{
		{Name: "daily-log-hygiene", Description: "Keep the daily logs tidy.", Location: "builtin/daily-log-hygiene/SKILL.md", Builtin: true},
		{Name: "durable-memory", Description: "What to remember.", Location: "builtin/durable-memory/SKILL.md", Builtin: true},
		{Name: "skill-authoring", Description: "Write skills.", Location: "builtin/skill-authoring/SKILL.md", Builtin: true},
	}
	res := assemble(t, w, Request{Skills: append(append([]Skill(nil), own[:20]...), builtin...)})
	if res.Report.SkillsMode != "inline" || res.Report.SkillCount != 23 || !strings.Contains(res.Prompt, "<name>durable-memory</name>") {
		t.Errorf("20 own + 3 built-in skills: mode %s, count %d", res.Report.SkillsMode, res.Report.SkillCount)
	}
	if want := "listed inline: 20 skills (+3 built-in, not counted) ≤ 20 and ~"; !strings.HasPrefix(res.Report.SkillsReason, want) {
		t.Errorf("reason %q, want it to start with %q", res.Report.SkillsReason, want)
	}
	var text strings.Builder
	res.Report.WriteText(&text)
	if !strings.Contains(text.String(), "skills listed inline: 20 skills (+3 built-in, not counted)") {
		t.Errorf("the text report does not say why:\n%s", text.String())
	}
	res = assemble(t, w, Request{Skills: append(append([]Skill(nil), own...), builtin...)})
	if res.Report.SkillsMode != "search" || res.Report.SkillsReason != "skill search: 21 skills (+3 built-in, not counted) > 20" {
		t.Errorf("21 own skills: mode %s, reason %q", res.Report.SkillsMode, res.Report.SkillsReason)
	}
	long := []Skill{{Name: "big", Description: strings.Repeat("d", 14001)}}
	if res = assemble(t, w, Request{Skills: long}); res.Report.SkillsReason != "skill search: 1 skill with ~3,501 est. tokens > 3,500" {
		t.Errorf("reason %q", res.Report.SkillsReason)
	}
}

func TestCaseMismatchedNames(t *testing.T) {
	for name, want := range map[string]string{
		"Soul.md": "SOUL.md", "AGENT.md": "AGENTS.md", "agent.md": "AGENTS.md", "BOOTSTAP.md": "BOOTSTRAP.md",
		"TOOL.md": "TOOLS.md", "HEARTBEATS.md": "HEARTBEAT.md", "IDENTIY.md": "IDENTITY.md",
		"README.md": "", "NOTES.md": "", "TODO.md": "", "memory.md": "",
	} {
		w := openMap(t, map[string]string{"AGENTS.md": "# A\n", name: "x"}, "")
		var got []string
		for _, p := range w.Check() {
			if p.Code == "file-name" {
				got = append(got, p.Message)
			}
		}
		switch {
		case want == "" && len(got) != 0:
			t.Errorf("%s: flagged though it is no near-miss: %q", name, got)
		case want != "" && (len(got) != 1 || !strings.Contains(got[0], "rename it to "+want)):
			t.Errorf("%s: check must say to rename it to %s, said %q", name, want, got)
		}
	}
}

func TestDiscovery(t *testing.T) {
	fsys := fstest.MapFS{
		"README.md":                     {Data: []byte("x")},
		"agents/one/agent.yaml":         {Data: []byte("name: uno\n")},
		"agents/two/agent.yaml":         {Data: []byte("")},
		"agents/two/users/x/agent.yaml": {Data: []byte("")}, // not an agent: inside users/
		".git/agent.yaml":               {Data: []byte("")},
		"node_modules/pkg/agent.yaml":   {Data: []byte("")},
		"agents/three/agent.yaml":       {Data: []byte("name: uno\n")},
	}
	w, err := Open(fsys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range w.Agents() {
		got = append(got, a.Name+"@"+a.Dir)
	}
	if strings.Join(got, " ") != "two@agents/two uno@agents/one" {
		t.Fatalf("agents: %v", got)
	}
	if len(w.Problems()) != 1 || w.Problems()[0].Code != "agent-duplicate-name" {
		t.Fatalf("want one duplicate-name problem, got %v", w.Problems())
	}
	root, _ := Open(fstest.MapFS{"SOUL.md": {Data: []byte("x")}}, Options{RootName: "repo"})
	if a, err := root.Agent(""); err != nil || a.Name != "repo" || a.Dir != "." {
		t.Fatalf("without agent.yaml the root is one agent named after the repository: %v %v", a, err)
	}
}

// A tree with no agent is an error, not an empty agent named after the
// directory: no agent.yaml anywhere discovery looks, and neither AGENTS.md
// nor SOUL.md at the root.
func TestNoAgent(t *testing.T) {
	const looked = "no agent here: looked for agent.yaml, AGENTS.md or SOUL.md at the root and for agent.yaml in its subdirectories"
	tests := []struct {
		name  string
		files []string
		want  string // the error, "" for an agent
		agent string // the agent found
	}{
		{"empty", nil, looked + " (create one with 'quire init')", ""},
		{"other files only", []string{"README.md", "MEMORY.md", "memory/2026-01-01.md", "skills/pdf/SKILL.md"}, looked + " (create one with 'quire init')", ""},
		{"a persona without agent.yaml below the root", []string{"README.md", "bots/tutor/SOUL.md", "bots/tutor/AGENTS.md"},
			looked + "; bots/tutor has AGENTS.md but no agent.yaml: add one there to make it an agent", ""},
		{"a user's file is no hint", []string{"users/ana/SOUL.md"}, looked + " (create one with 'quire init')", ""},
		{"a directory named SOUL.md", []string{"SOUL.md/x"}, looked + " (create one with 'quire init')", ""},
		{"AGENTS.md at the root", []string{"AGENTS.md"}, "", "repo@."},
		{"SOUL.md at the root", []string{"SOUL.md", "README.md"}, "", "repo@."},
		{"agent.yaml at the root", []string{"agent.yaml"}, "", "repo@."},
		{"agent.yaml below", []string{"README.md", "bots/tutor/agent.yaml"}, "", "tutor@bots/tutor"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for _, f := range tc.files {
				fsys[f] = &fstest.MapFile{Data: []byte("x\n")}
			}
			if len(tc.files) == 0 {
				fsys["."] = &fstest.MapFile{Mode: fs.ModeDir | 0o755}
			}
			w, err := Open(fsys, Options{RootName: "repo"})
			if tc.want != "" {
				var none *NoAgentError
				if !errors.As(err, &none) || !errors.Is(err, ErrNoAgent) || err.Error() != tc.want {
					t.Fatalf("Open = %v (%T)\nwant %s", err, err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range w.Agents() {
				got = append(got, a.Name+"@"+a.Dir)
			}
			if strings.Join(got, " ") != tc.agent {
				t.Fatalf("agents %v, want %s", got, tc.agent)
			}
		})
	}
}

// readDirCounter is a real file system that counts the directories read.
type readDirCounter struct {
	fs.FS
	dirs []string
}

func (c *readDirCounter) ReadDir(name string) ([]fs.DirEntry, error) {
	c.dirs = append(c.dirs, name)
	return fs.ReadDir(c.FS, name)
}

// A root agent without agent.yaml: discovery lists the root and the
// directories that may hold agents, never the root's skills/, users/,
// memory/ or rooms/ (issue 17: walking a root agent's skills was 43 % of a
// cold assembly).
func TestDiscoverySkipsTheRootAgentsOwnDirectories(t *testing.T) {
	fsys := fstest.MapFS{"SOUL.md": {Data: []byte("x")}, "docs/notes.md": {Data: []byte("x")}}
	for i := range 20 {
		fsys[fmt.Sprintf("skills/s%02d/SKILL.md", i)] = &fstest.MapFile{Data: []byte("x")}
	}
	for _, d := range []string{"users/alice", "memory", "rooms"} {
		fsys[d+"/x.md"] = &fstest.MapFile{Data: []byte("x")}
	}
	c := &readDirCounter{FS: fsys}
	w, err := Open(c, Options{RootName: "repo"})
	if err != nil {
		t.Fatal(err)
	}
	if a, err := w.Agent(""); err != nil || a.Dir != "." {
		t.Fatalf("root agent: %v %v", a, err)
	}
	if strings.Join(c.dirs, " ") != ". docs" {
		t.Errorf("discovery read %v, want . and docs only", c.dirs)
	}
}

// openCounter is a real file system that counts the files opened.
type openCounter struct {
	fs.FS
	opened []string
}

func (c *openCounter) Open(name string) (fs.File, error) {
	c.opened = append(c.opened, name)
	return c.FS.Open(name)
}

// A new user's first prompt opens nothing: the listings of the agent
// directory and of users/ say which files exist (issue 17).
func TestNewUserOpensNoFiles(t *testing.T) {
	fsys := fstest.MapFS{
		"a/agent.yaml":        {Data: []byte("")},
		"a/SOUL.md":           {Data: []byte("soul")},
		"a/USER.md":           {Data: []byte("the default user")},
		"a/users/ana/USER.md": {Data: []byte("ana")},
	}
	c := &openCounter{FS: fsys}
	w, err := Open(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ana := assemble(t, w, Request{User: "ana", Now: noon})
	if !strings.Contains(ana.Prompt, "\nana\n") {
		t.Fatalf("ana's USER.md is missing from her prompt")
	}
	carol := assemble(t, w, Request{User: "carol", Now: noon}) // reads the agent-level USER.md
	c.opened = nil
	bob := assemble(t, w, Request{User: "bob", Now: noon})
	if len(c.opened) != 0 {
		t.Errorf("bob's first prompt opened %v", c.opened)
	}
	if !strings.Contains(bob.Prompt, "the default user") {
		t.Errorf("bob gets the agent-level USER.md")
	}
	// Bob shares Carol's budgeting: the same report but for the user, and
	// the same prompt but for the user id.
	if bob.Report.User != "bob" || carol.Report.User != "carol" || ana.Report.User != "ana" {
		t.Errorf("report users: %q %q %q", bob.Report.User, carol.Report.User, ana.Report.User)
	}
	bob.Report.User = "carol"
	bob.Report.PromptBytes, bob.Report.PromptChars = carol.Report.PromptBytes, carol.Report.PromptChars // "bob" is shorter
	if !reflect.DeepEqual(bob.Report, carol.Report) {
		t.Errorf("reports of two users without files of their own differ:\n%+v\n%+v", bob.Report, carol.Report)
	}
	if strings.ReplaceAll(bob.Prompt, `"bob"`, `"carol"`) != carol.Prompt {
		t.Errorf("prompts of two users without files of their own differ beyond the id")
	}
	if ana.Report.InjectedChars == carol.Report.InjectedChars {
		t.Errorf("ana's own USER.md must not be shared with others")
	}
}

// A prompt made from another user's template is exactly the prompt
// rendered for that user from scratch.
func TestTemplatedPromptEqualsFreshOne(t *testing.T) {
	fsys := fstest.MapFS{
		"a/agent.yaml":        {Data: []byte("")},
		"a/SOUL.md":           {Data: []byte("Sé amable.")},
		"a/USER.md":           {Data: []byte("the default user")},
		"a/users/ana/USER.md": {Data: []byte("ana")},
	}
	shared, err := Open(fsys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	base := Request{Now: noon, Tools: []Tool{{Name: "t", Description: "d"}}, Extra: "x", CountPromptTokens: true}
	for i, user := range []string{"carol", "zoë", "ana", "b<o>b&co", "mürz"} {
		req := base
		req.User = user
		req.CountPromptTokens = i%2 == 0
		got := assemble(t, shared, req)
		fresh, err := Open(fsys, Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := assemble(t, fresh, req)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("user %q: templated result differs from a fresh one:\n%+v\n%+v", user, got.Report, want.Report)
		}
	}
}

// Assemble remembers rendered prompts; every input of a request must be
// part of what it remembers them by.
func TestRememberedPromptsFollowEveryInput(t *testing.T) {
	w := openMap(t, allFiles(), "")
	base := Request{User: "u3", Now: noon, Tools: []Tool{{"t", "d"}}, Skills: []Skill{{Name: "s", Description: "d", Location: "l"}}} // u3 has no BOOTSTRAP.md, so virtual files show
	first := assemble(t, w, base).Prompt
	if again := assemble(t, w, base).Prompt; again != first {
		t.Fatalf("the same request must give the same bytes")
	}
	variants := map[string]func(r *Request){
		"tool":     func(r *Request) { r.Tools = []Tool{{"t2", "d"}} },
		"tool doc": func(r *Request) { r.Tools = []Tool{{"t", "d2"}} },
		"skill":    func(r *Request) { r.Skills = []Skill{{Name: "s", Description: "d", Location: "l2"}} },
		"extra":    func(r *Request) { r.Extra = "x" },
		"virtual":  func(r *Request) { r.VirtualFiles = []VirtualFile{{"TEAM.md", "t"}} },
		"sandbox":  func(r *Request) { r.Sandbox = "box" },
		"model":    func(r *Request) { r.Model = "m" },
		"spawn":    func(r *Request) { r.CanSpawn = true },
		"time":     func(r *Request) { r.ShowTime = true },
		"minute":   func(r *Request) { r.ShowTime, r.Now = true, noon.Add(time.Minute) },
		"day":      func(r *Request) { r.Now = noon.Add(24 * time.Hour) },
		"user":     func(r *Request) { r.User = "u1" },
		"channel":  func(r *Request) { r.Channel = ChannelGroup },
	}
	seen := map[string]string{"base": first}
	for name, change := range variants {
		r := base
		change(&r)
		p := assemble(t, w, r).Prompt
		for other, q := range seen {
			if p == q {
				t.Errorf("changing the %s gives the same prompt as %s", name, other)
			}
		}
		seen[name] = p
	}
	tok := base
	tok.CountPromptTokens = true
	if n := assemble(t, w, tok).Report.PromptTokens; n == 0 {
		t.Fatalf("a remembered prompt still gets its tokens counted when asked")
	}
	if n := assemble(t, w, base).Report.PromptTokens; n != 0 {
		t.Fatalf("prompt tokens are reported only when asked")
	}
}

// joinPath's shortcut gives what path.Join gives.
func FuzzJoinPath(f *testing.F) {
	for _, s := range [][2]string{{".", "SOUL.md"}, {"a/users/x", "USER.md"}, {"a/", "b"}, {"a", "../b"}, {"", "x"}, {"a//b", "c"}, {"./a", "b"}, {"0", "."}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if got, want := joinPath(a, b), path.Join(a, b); got != want {
			t.Fatalf("joinPath(%q, %q) = %q, path.Join gives %q", a, b, got, want)
		}
	})
}

// TestByteOrderMarkAndStoredBytes: a UTF-8 byte order mark is neither
// injected nor charged, and original_bytes is the file as stored, also
// when invalid bytes reach the prompt as U+FFFD.
func TestByteOrderMarkAndStoredBytes(t *testing.T) {
	w := openMap(t, map[string]string{
		workspace.SoulFile:  "\uFEFF# Soul\nCalm.\n",
		workspace.ToolsFile: "ok\xff\xfe bad\n",
	}, "")
	res := assemble(t, w, Request{})
	soul, _ := res.Report.File(workspace.SoulFile)
	if soul.OriginalChars != len("# Soul\nCalm.\n") || soul.OriginalBytes != int64(len("\uFEFF# Soul\nCalm.\n")) {
		t.Errorf("SOUL.md with a BOM: %d chars, %d bytes", soul.OriginalChars, soul.OriginalBytes)
	}
	if strings.Contains(res.Prompt, "\uFEFF") {
		t.Error("the byte order mark reached the prompt")
	}
	tools, _ := res.Report.File(workspace.ToolsFile)
	if tools.OriginalBytes != int64(len("ok\xff\xfe bad\n")) || tools.InvalidBytes != 2 {
		t.Errorf("TOOLS.md with invalid bytes: %d bytes stored, %d invalid", tools.OriginalBytes, tools.InvalidBytes)
	}
}

// One request for one user lists that user's directory, not users/ (a
// cold assembly should not read every user's name); a second user's
// request lists users/, after which new users cost no listing at all.
func TestFirstUserListsOnlyTheirDirectory(t *testing.T) {
	fsys := fstest.MapFS{
		"a/agent.yaml":        {Data: []byte("")},
		"a/SOUL.md":           {Data: []byte("soul")},
		"a/USER.md":           {Data: []byte("the default user")},
		"a/users/ana/USER.md": {Data: []byte("ana")},
		"a/users/bob/USER.md": {Data: []byte("bob")},
	}
	c := &readDirCounter{FS: fsys}
	w, err := Open(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c.dirs = nil
	if ana := assemble(t, w, Request{User: "ana", Now: noon}); !strings.Contains(ana.Prompt, "\nana\n") {
		t.Fatalf("ana's USER.md is missing from her prompt")
	}
	if got := strings.Join(c.dirs, " "); got != "a/users/ana" {
		t.Errorf("ana's first prompt listed %q, want a/users/ana only", got)
	}
	c.dirs = nil
	if bob := assemble(t, w, Request{User: "bob", Now: noon}); !strings.Contains(bob.Prompt, "\nbob\n") {
		t.Fatalf("bob's USER.md is missing from his prompt")
	}
	if got := strings.Join(c.dirs, " "); got != "a/users a/users/bob" {
		t.Errorf("bob's first prompt listed %q, want a/users then a/users/bob", got)
	}
	c.dirs = nil
	if carol := assemble(t, w, Request{User: "carol", Now: noon}); !strings.Contains(carol.Prompt, "the default user") {
		t.Fatalf("carol does not see the agent's USER.md")
	}
	if len(c.dirs) != 0 {
		t.Errorf("carol's first prompt listed %v", c.dirs)
	}

	// A first user of an agent without users/ lists nothing.
	c2 := &readDirCounter{FS: fstest.MapFS{"a/agent.yaml": {Data: []byte("")}, "a/SOUL.md": {Data: []byte("soul")}}}
	w2, err := Open(c2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c2.dirs = nil
	assemble(t, w2, Request{User: "dora", Now: noon})
	if len(c2.dirs) != 0 {
		t.Errorf("without users/, dora's prompt listed %v", c2.dirs)
	}
}
