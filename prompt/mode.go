package prompt

import "github.com/quirehq/quire/workspace"

// Mode is how much of the system prompt a request gets: the design
// chapter's later revision (GoClaw's full / task / minimal / none).
type Mode string

// Modes, fullest first.
const (
	// ModeFull is the main agent's prompt: every section and every
	// context file the session sees.
	ModeFull Mode = "full"
	// ModeTask is lean but capable, for automation: who the agent is
	// (AGENTS, SOUL, TOOLS, IDENTITY) and how to work (tooling, safety,
	// skill search, memory recall), without the conversation's parts —
	// no user, messaging, heartbeats, silent replies, first run, memory
	// files or daily logs.
	ModeTask Mode = "task"
	// ModeMinimal is a sub-agent's or cron job's prompt: AGENTS.md and
	// TOOLS.md, no skills, memory recall, user or messaging.
	ModeMinimal Mode = "minimal"
	// ModeNone is the identity line alone.
	ModeNone Mode = "none"
)

// Modes lists the modes, fullest first.
var Modes = []Mode{ModeFull, ModeTask, ModeMinimal, ModeNone}

func (m Mode) valid() bool {
	return m == ModeFull || m == ModeTask || m == ModeMinimal || m == ModeNone
}

// DefaultMode is the mode of a request that names none: full for a main
// session, minimal for a sub-agent or a cron job.
func (s Session) DefaultMode() Mode {
	if s.Full() {
		return ModeFull
	}
	return ModeMinimal
}

// modeCandidates returns the context files a request in mode m sees when
// it is not a full one: nil for none, the persona for task, AGENTS.md and
// TOOLS.md for minimal.
func modeCandidates(m Mode, c func(name string, perUser, userOnly bool) candidate) []candidate {
	switch m {
	case ModeNone:
		return nil
	case ModeTask:
		return []candidate{c(workspace.AgentsFile, false, false), c(workspace.SoulFile, false, false),
			c(workspace.ToolsFile, false, false), c(workspace.IdentityFile, false, false)}
	}
	return []candidate{c(workspace.AgentsFile, false, false), c(workspace.ToolsFile, false, false)}
}

// taskSkillsReason is the report's skills reason in task mode.
const taskSkillsReason = "skill search: task mode never lists skills inline"

// renderNone renders mode none: the identity line alone.
func renderNone(rep *Report, a *Agent) string {
	out := a.Config.Identity + "\n"
	rep.SkillsMode = "none"
	rep.PromptBytes = len(out)
	rep.PromptChars, _ = countChars(out)
	rep.StablePrefixBytes = len(out)
	return out
}
