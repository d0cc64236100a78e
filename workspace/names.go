package workspace

import (
	"path"
	"strings"
)

// File names of an agent workspace (behavior.md §1). Every package names
// these files through these constants.
const (
	ConfigFile         = "agent.yaml"
	AgentsFile         = "AGENTS.md"
	SoulFile           = "SOUL.md"
	ToolsFile          = "TOOLS.md"
	IdentityFile       = "IDENTITY.md"
	UserFile           = "USER.md"
	UserPredefinedFile = "USER_PREDEFINED.md"
	HeartbeatFile      = "HEARTBEAT.md"
	BootstrapFile      = "BOOTSTRAP.md"
	MemoryFile         = "MEMORY.md"
	MemoryFallbackFile = "memory.md"
	SkillFile          = "SKILL.md"
)

// Directories inside an agent workspace.
const (
	UsersDir        = "users"
	RoomsDir        = "rooms"
	MemoryDir       = "memory"
	SkillsDir       = "skills"
	AgentSkillsDir  = ".agents/skills"
	configFileAlias = "agent.yml"
)

// The shared skills repository: a repository the daemon hosts under this
// name holds <slug>/SKILL.md skills every agent may load, and GrantsFile
// at its root says which agents may use each private one.
const (
	SharedSkillsRepo = "skills"
	GrantsFile       = "grants.yaml"
)

// ContextFiles are the context file names, in the order a private main
// session sees them (memory.md and daily logs are context files too, see
// IsContextFileName).
var ContextFiles = []string{AgentsFile, SoulFile, ToolsFile, IdentityFile, UserFile, UserPredefinedFile, HeartbeatFile, BootstrapFile, MemoryFile}

// SharedFiles are the files a predefined agent shares between all its
// users: a copy in a user's directory is ignored.
var SharedFiles = []string{AgentsFile, SoulFile, ToolsFile, IdentityFile, UserPredefinedFile, HeartbeatFile}

// PersonaFiles are the files that say who the agent is: a write from a
// chat client never changes them on the deployed branch, it becomes a
// proposal (behavior.md §7).
var PersonaFiles = []string{AgentsFile, SoulFile, IdentityFile, ToolsFile}

// Kind is what a path of an agent workspace is.
type Kind int

// Kinds of paths. A path under users/<dir>/ has the kind of the same path
// at the agent level (see SplitUser for the user directory).
const (
	KindOther    Kind = iota // not read by Quire
	KindConfig               // agent.yaml
	KindPersona              // AGENTS.md, SOUL.md, IDENTITY.md, TOOLS.md
	KindContext              // USER_PREDEFINED.md, HEARTBEAT.md
	KindPerUser              // USER.md, BOOTSTRAP.md: each user's own
	KindMemory               // MEMORY.md, memory.md, memory/**/*.md other than daily logs
	KindDailyLog             // memory/YYYY-MM-DD.md
	KindSkill                // skills/<slug>/SKILL.md, .agents/skills/<slug>/SKILL.md
)

var kindNames = [...]string{"other file", "agent.yaml", "persona file", "context file", "per-user file", "memory document", "daily log", "skill"}

// String names the kind as messages do ("daily log").
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown kind"
}

// IsMemory reports whether k is a memory document or a daily log: the
// files the memory index holds and chat clients may write.
func (k Kind) IsMemory() bool { return k == KindMemory || k == KindDailyLog }

// KindOf says what rel, a slash path relative to an agent directory, is.
// Names are case-sensitive, as the prompt reads them.
func KindOf(rel string) Kind {
	if _, rest, ok := SplitUser(rel); ok {
		rel = rest
	}
	switch rel {
	case ConfigFile:
		return KindConfig
	case AgentsFile, SoulFile, IdentityFile, ToolsFile:
		return KindPersona
	case UserPredefinedFile, HeartbeatFile:
		return KindContext
	case UserFile, BootstrapFile:
		return KindPerUser
	case MemoryFile, MemoryFallbackFile:
		return KindMemory
	}
	if strings.HasPrefix(rel, MemoryDir+"/") && strings.HasSuffix(rel, ".md") {
		if _, ok := logDate(rel); ok { // rel is past its user directory already
			return KindDailyLog
		}
		return KindMemory
	}
	for _, dir := range []string{SkillsDir, AgentSkillsDir} {
		if slug, ok := strings.CutPrefix(rel, dir+"/"); ok {
			if s, f, ok := strings.Cut(slug, "/"); ok && s != "" && f == SkillFile {
				return KindSkill
			}
		}
	}
	return KindOther
}

// SplitUser splits users/<dir>/<rest> into its user directory name and the
// rest; ok is false for any other path.
func SplitUser(rel string) (dir, rest string, ok bool) {
	after, ok := strings.CutPrefix(rel, UsersDir+"/")
	if !ok {
		return "", "", false
	}
	dir, rest, ok = strings.Cut(after, "/")
	if !ok || dir == "" || rest == "" {
		return "", "", false
	}
	return dir, rest, true
}

// IsContextFileName reports whether name (relative to an agent or user
// directory) is a context file a session may inject.
func IsContextFileName(name string) bool {
	for _, n := range ContextFiles {
		if n == name {
			return true
		}
	}
	_, log := logDate(name)
	return name == MemoryFallbackFile || log
}

// IsTextFile reports whether a path is read as text into an agent's
// context, wherever it is in a repository: Markdown files (AGENTS.md,
// MEMORY.md, memory/*.md, SKILL.md, …) and agent.yaml. These must be
// valid UTF-8.
func IsTextFile(p string) bool {
	base := path.Base(p)
	return strings.EqualFold(path.Ext(base), ".md") || base == ConfigFile || base == configFileAlias
}

// SkipsAgentSearch reports whether the directory name is never searched
// for agents (agent.yaml): a hidden directory, node_modules and _shared
// anywhere, and the users/, memory/, rooms/ and skills/ directories of an
// agent or of the root (inAgent).
func SkipsAgentSearch(name string, inAgent bool) bool {
	if strings.HasPrefix(name, ".") || name == "node_modules" || name == SharedDir {
		return true
	}
	return inAgent && (name == UsersDir || name == MemoryDir || name == RoomsDir || name == SkillsDir)
}
