package prompt

import (
	"strconv"
	"strings"
	"time"
)

// render writes the sections in order. rep is the plan's report, to be
// completed with the request-dependent figures. userAt is the offset of
// the user id in the prompt, or -1 when it is not there. Each section is
// a function of the writer and what it needs (no struct of them all: a
// pointer to one would move the request to the heap on the served path).
func render(rep *Report, a *Agent, p *plan, req *Request, local time.Time) (prompt string, userAt int) {
	userAt = -1
	if req.Mode == ModeNone {
		return renderNone(rep, a), -1
	}
	full := req.Mode == ModeFull
	task := req.Mode == ModeTask
	var b promptWriter
	b.Grow(sectionBytes + p.contextBytes + len(req.Extra) + toolBytes(req.Tools) + skillBytes(req.Skills) + virtualBytes(req.VirtualFiles))
	stable := -1 // length of the stable prefix, once known
	unstable := func() {
		if stable < 0 {
			stable = b.Len()
		}
	}

	b.str(a.Config.Identity) // 1 Identity.
	b.lit("\n")
	if p.bootstrap {
		unstable()
		b.lit(sectionFirstRun) // 1.5 First-run override.
	}
	writeTooling(&b, req.Tools)
	b.lit(sectionSafety) // 3 Safety.
	rep.SkillCount, rep.SkillsMode = len(req.Skills), "none"
	if (full || task) && len(req.Skills) > 0 {
		writeSkills(&b, rep, p, req.Skills, task)
	}
	if full || task {
		b.lit(sectionMemoryRecall) // 5 Memory Recall.
	}
	writeWorkspace(&b, a.Name, req.Sandbox)
	if full {
		unstable()
		userAt = writeUser(&b, req.User, req.Channel)
	}
	if !local.IsZero() {
		unstable()
		writeTime(&b, local, req.ShowTime)
	}
	if full {
		b.lit(sectionMessaging) // 9 Messaging.
	}
	if req.Extra != "" {
		unstable()
		writeExtra(&b, req.Extra)
	}
	unstable()
	virtual := req.VirtualFiles
	if p.bootstrap {
		virtual = nil
	}
	writeProjectContext(&b, rep, p.files, virtual)
	if full {
		b.lit(sectionSilentReplies) // 12 Silent Replies.
		b.lit(sectionHeartbeats)    // 13 Heartbeats.
	}
	if req.CanSpawn {
		b.lit(sectionSpawning) // 14 Sub-Agent Spawning.
	}
	writeRuntime(&b, a.Name, req.Session, req.Channel, req.Model)

	out := b.String()
	rep.PromptBytes = len(out)
	rep.PromptChars = len(out) - b.cont
	rep.StablePrefixBytes = stable
	return out, userAt
}

// writeTooling writes 2 Tooling.
func writeTooling(b *promptWriter, tools []Tool) {
	b.lit("\n## Tooling\n")
	if len(tools) == 0 {
		b.lit("You have no tools in this session. Work from the conversation and the context below.\n")
		return
	}
	b.lit("You can call these tools. Use a tool when it is the reliable way to get something done; do not pretend to have called one.\n")
	for _, t := range tools {
		b.lit("- ")
		b.str(t.Name)
		if t.Description != "" {
			b.lit(": ")
			b.str(oneLine(t.Description))
		}
		b.lit("\n")
	}
}

// writeSkills writes 4 Skills (full and task modes): the list inline, or
// the instruction to search; searchOnly (task mode) always searches.
func writeSkills(b *promptWriter, rep *Report, p *plan, skills []Skill, searchOnly bool) {
	d := decideSkills(skills)
	rep.SkillsReason = p.skillsReason(d)
	if searchOnly {
		rep.SkillsReason = taskSkillsReason
	}
	if !d.inline || searchOnly {
		rep.SkillsMode = "search"
		b.lit("\n## Skills\nThis agent has ")
		b.lit(strconv.Itoa(len(skills)))
		b.lit(sectionSkillsSearch)
		return
	}
	rep.SkillsMode = "inline"
	b.lit(sectionSkillsInline)
	b.lit("<available_skills>\n")
	for _, s := range skills {
		b.lit("<skill>\n<name>")
		b.esc(s.Name)
		b.lit("</name>\n<description>")
		b.esc(s.Description)
		b.lit("</description>\n<location>")
		b.esc(s.Location)
		b.lit("</location>\n</skill>\n")
	}
	b.lit("</available_skills>\n")
}

// writeWorkspace writes 6 Workspace and 6.5 Sandbox.
func writeWorkspace(b *promptWriter, agent, sandbox string) {
	b.lit("\n## Workspace\nYour workspace is the agent \"")
	b.str(agent)
	b.lit("\" in a git repository that Quire deploys.")
	b.lit(sectionWorkspace)
	if sandbox != "" {
		b.lit("\n## Sandbox\nYou run inside a sandbox: ")
		b.str(oneLine(sandbox))
		b.lit(". Files and network access outside it may be unavailable; work within it and never try to leave it.\n")
	}
}

// writeUser writes 7 User Identity (main sessions) and returns the
// offset of the user id, or -1.
func writeUser(b *promptWriter, user string, channel Channel) (userAt int) {
	userAt = -1
	b.lit("\n## User\n")
	if user != "" {
		b.lit("You are talking with the user whose id is \"")
		userAt = b.Len()
		b.str(user)
		b.lit("\". USER.md below tells you about them.\n")
	} else {
		b.lit("The user has not been identified; do not assume who they are.\n")
	}
	if channel == ChannelGroup {
		b.lit("This is a group conversation: several people may be present, and each message names its sender.\n")
	}
	return userAt
}

// writeTime writes 8 Current Time.
func writeTime(b *promptWriter, local time.Time, showTime bool) {
	var buf [64]byte
	b.lit("\n## Current Time\nToday is ")
	b.bytes(local.AppendFormat(buf[:0], "Monday, 2006-01-02"))
	if showTime {
		b.lit("; the time is ")
		b.bytes(local.AppendFormat(buf[:0], "15:04"))
	}
	b.lit(" (")
	b.str(local.Location().String())
	b.lit(").\n")
}

// writeExtra writes 10 Extra context.
func writeExtra(b *promptWriter, extra string) {
	b.lit("\n<extra_context>\n")
	b.str(extra)
	if !strings.HasSuffix(extra, "\n") {
		b.lit("\n")
	}
	b.lit("</extra_context>\n")
}

// writeProjectContext writes 11 Project Context: the context files as
// budgeted, then the request's virtual files (none on a first run).
func writeProjectContext(b *promptWriter, rep *Report, files []planFile, virtual []VirtualFile) {
	if len(files) == 0 && len(virtual) == 0 {
		return
	}
	b.lit(sectionProjectContext)
	for _, f := range files {
		b.lit("<context_file name=\"")
		b.esc(f.name)
		b.lit("\">\n")
		b.pre(f.body.head, f.cont)
		b.lit(f.body.marker)
		b.lit(f.body.tail)
		if !f.body.endsInNewline() {
			b.lit("\n")
		}
		b.lit("</context_file>\n")
	}
	if len(virtual) > 0 {
		rep.Virtual = make([]string, len(virtual))
	}
	for i, v := range virtual {
		rep.Virtual[i] = v.Name
		b.lit("<system_context name=\"")
		b.esc(v.Name)
		b.lit("\">\n")
		b.str(v.Content)
		if !strings.HasSuffix(v.Content, "\n") {
			b.lit("\n")
		}
		b.lit("</system_context>\n")
	}
}

// writeRuntime writes 15 Runtime.
func writeRuntime(b *promptWriter, agent string, session Session, channel Channel, model string) {
	b.lit("\n## Runtime\nagent=")
	b.str(agent)
	b.lit(" session=")
	b.lit(string(session))
	b.lit(" channel=")
	b.lit(string(channel))
	if model != "" {
		b.lit(" model=")
		b.str(oneLine(model))
	}
	b.lit("\n")
}
