package workspace

import (
	"path"
	"regexp"
	"strings"
)

// Repository-level files (behavior.md §1, issue 27): outside every agent
// directory, at the root of the repository.
//
//	_shared/CULTURE.md, _shared/*.md   every agent of the repository sees them,
//	                                   after its own files, charged to its budget
//	_shared/teams/<team>/SOUL.md       the team's persona, for its members
//	_shared/teams/<team>/MEMORY.md     the team's memory, for its members
//
// An agent joins a team with team: in its agent.yaml.
const (
	SharedDir   = "_shared"
	TeamsDir    = SharedDir + "/teams"
	CultureFile = "CULTURE.md"
)

// Virtual context files: derived from agent.yaml (or supplied by the
// caller) and rendered in <system_context>, never read from or written to
// the workspace.
const (
	DelegationFile   = "DELEGATION.md"
	TeamFile         = "TEAM.md"
	AvailabilityFile = "AVAILABILITY.md"
)

// VirtualFiles are the virtual context files, in the order a prompt
// renders them.
var VirtualFiles = []string{DelegationFile, TeamFile, AvailabilityFile}

// IsVirtualFile reports whether name is a virtual context file.
func IsVirtualFile(name string) bool {
	for _, v := range VirtualFiles {
		if v == name {
			return true
		}
	}
	return false
}

// TeamFiles are the files of a team directory its members see, in prompt
// order.
var TeamFiles = []string{SoulFile, MemoryFile}

// teamName is what a team may be called: it names a directory.
var teamName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// ValidTeamName reports whether name can name a team (and its directory
// _shared/teams/<name>/): lower-case letters, digits, - and _, at most 64.
func ValidTeamName(name string) bool { return teamName.MatchString(name) }

// TeamDir is the slash path of a team's directory in the repository.
func TeamDir(team string) string { return TeamsDir + "/" + team }

// IsSharedContextFile reports whether p, a slash path from the repository
// root, is a file the prompt injects from _shared/: a Markdown file
// directly in it, or a team's SOUL.md or MEMORY.md.
func IsSharedContextFile(p string) bool {
	dir, base := path.Split(p)
	dir = strings.TrimSuffix(dir, "/")
	if dir == SharedDir {
		return strings.HasSuffix(base, ".md")
	}
	team, ok := strings.CutPrefix(dir, TeamsDir+"/")
	if !ok || !ValidTeamName(team) {
		return false
	}
	for _, f := range TeamFiles {
		if base == f {
			return true
		}
	}
	return false
}
