package prompt

import (
	"time"

	"github.com/quirehq/quire/workspace"
)

// Session is the kind of conversation a prompt is for.
type Session string

// Sessions. Main sessions get the full prompt; sub-agents and cron jobs get
// the minimal one with only AGENTS.md and TOOLS.md.
const (
	SessionMain     Session = "main"
	SessionSubagent Session = "subagent"
	SessionCron     Session = "cron"
)

// Channel says whether a main session is private or shared.
type Channel string

// Channels. MEMORY.md and BOOTSTRAP.md are only shown in private (dm)
// sessions; a group channel may name a room.
const (
	ChannelDM    Channel = "dm"
	ChannelGroup Channel = "group"
)

// Full reports whether s gets the full prompt.
func (s Session) Full() bool { return s == SessionMain }

func (s Session) valid() bool { return s == SessionMain || s == SessionSubagent || s == SessionCron }
func (c Channel) valid() bool { return c == ChannelDM || c == ChannelGroup }

// candidate is a context file a session wants, before it is read.
type candidate struct {
	name     string // display name
	rel      string // path relative to the agent (or user) directory
	perUser  bool   // look in the user's directory first
	userOnly bool   // with a user, never fall back to the agent-level file
	root     bool   // rel is from the repository root (_shared/, shared.go)
}

// candidates returns the context files a request sees, in prompt order
// (behavior.md §2). day is the agent-local date, zero for none.
func candidates(cfg *Config, mode Mode, channel Channel, room string, hasUser bool, day time.Time) []candidate {
	open := cfg.Type == TypeOpen
	c := func(name string, perUser, userOnly bool) candidate {
		return candidate{name: name, rel: name, perUser: perUser || open, userOnly: userOnly}
	}
	if mode != ModeFull {
		return modeCandidates(mode, c)
	}
	list := make([]candidate, 0, 12) // the most a request can see
	list = append(list,
		c(workspace.AgentsFile, false, false),
		c(workspace.SoulFile, false, false),
		c(workspace.ToolsFile, false, false),
		c(workspace.IdentityFile, false, false),
		c(workspace.UserFile, true, false),
	)
	if cfg.Type == TypePredefined {
		list = append(list, c(workspace.UserPredefinedFile, false, false))
	}
	if channel == ChannelGroup && room != "" {
		if enc, err := workspace.EncodeID(room); err == nil {
			name := workspace.RoomsDir + "/" + enc + ".md"
			list = append(list, candidate{name: name, rel: name})
		}
	}
	list = append(list, c(workspace.HeartbeatFile, false, false))
	if channel == ChannelDM {
		list = append(list, c(workspace.BootstrapFile, true, hasUser), c(workspace.MemoryFile, true, false))
	}
	if !day.IsZero() {
		for _, d := range []time.Time{day.AddDate(0, 0, -1), day} {
			name := workspace.DailyLog(d)
			list = append(list, candidate{name: name, rel: name, perUser: true})
		}
	}
	return list
}
