package workspace

import "testing"

func TestSharedNames(t *testing.T) {
	for p, want := range map[string]bool{
		"_shared/CULTURE.md":           true,
		"_shared/notes.md":             true,
		"_shared/notes.txt":            false,
		"_shared/teams/crew/SOUL.md":   true,
		"_shared/teams/crew/MEMORY.md": true,
		"_shared/teams/crew/AGENTS.md": false,
		"_shared/teams/Crew/SOUL.md":   false,
		"_shared/teams/crew/x/SOUL.md": false,
		"agents/a/_shared/CULTURE.md":  false,
		"CULTURE.md":                   false,
	} {
		if got := IsSharedContextFile(p); got != want {
			t.Errorf("IsSharedContextFile(%q) = %v, want %v", p, got, want)
		}
	}
	for name, want := range map[string]bool{"crew": true, "front-desk_2": true, "": false, "Crew": false, "a/b": false, "..": false, "-x": false} {
		if got := ValidTeamName(name); got != want {
			t.Errorf("ValidTeamName(%q) = %v, want %v", name, got, want)
		}
	}
	if !SkipsAgentSearch(SharedDir, false) || !IsVirtualFile(TeamFile) || IsVirtualFile(SoulFile) {
		t.Error("_shared/ is searched for agents, or the virtual names are wrong")
	}
}
