package skills

import (
	"path"
	"path/filepath"

	"github.com/quirehq/quire/workspace"
)

// location is where the prompt tells the model a skill lives. Workspace
// tiers use the path relative to the agent directory, whatever the source
// (disk, git tree, editor overlay), so the CLI, the daemon and the language
// server assemble the same bytes; the home tier uses "~/.agents/skills".
// rel is the skill's directory within the tier ("pdf", or "docs/pdf" in a
// group) and file its SKILL.md's name.
func location(src Source, rel, file string) string {
	return shownPath(locationPrefix(src), rel, file)
}

// locationPrefix is what location puts before rel.
func locationPrefix(src Source) string {
	switch src.Tier {
	case TierWorkspace:
		return workspace.SkillsDir
	case TierWorkspaceAgents:
		return workspace.AgentSkillsDir
	case TierHome:
		return "~/" + workspace.AgentSkillsDir
	case TierManaged:
		return "managed"
	}
	return src.Prefix
}

// shownPath is path.Join(prefix, rel, file) for the names readTier
// produces (rel: one or two directory entries, file: a file name), with
// one allocation.
func shownPath(prefix, rel, file string) string {
	if prefix == "" || prefix == "." || prefix == "/" || path.Clean(prefix) != prefix {
		return path.Join(prefix, rel, file)
	}
	return prefix + "/" + rel + "/" + file
}

// diskPath is filepath.Join(dir, rel) for the names readTier produces.
func diskPath(dir, rel string) string {
	if dir == "" || dir == "." || dir == string(filepath.Separator) || filepath.Clean(dir) != dir {
		return filepath.Join(dir, filepath.FromSlash(rel))
	}
	return dir + string(filepath.Separator) + filepath.FromSlash(rel)
}

// diskFile is filepath.Join(dir, rel, file), with one allocation where
// it can.
func diskFile(dir, rel, file string) string {
	if filepath.Separator != '/' || dir == "" || dir == "." || dir == "/" || filepath.Clean(dir) != dir {
		return filepath.Join(dir, filepath.FromSlash(rel), file)
	}
	return dir + "/" + rel + "/" + file
}

// diskFileZ is diskFile with a NUL after it, for the open system call:
// one allocation, which the skill's paths are then cut from. cleanDir
// says dir is a clean path other than "", "." and "/" (diskDirClean),
// which a tier reader finds out once.
func diskFileZ(dir, rel, file string, cleanDir bool) string {
	if filepath.Separator != '/' || !cleanDir {
		return filepath.Join(dir, filepath.FromSlash(rel), file) + "\x00"
	}
	return dir + "/" + rel + "/" + file + "\x00"
}

// diskDirClean reports whether diskFile joins names to dir without
// cleaning.
func diskDirClean(dir string) bool {
	return dir != "" && dir != "." && dir != "/" && filepath.Clean(dir) == dir
}

// clean reports whether p is a path shownPath joins without cleaning.
func clean(p string) bool {
	return p != "" && p != "." && p != "/" && path.Clean(p) == p
}
