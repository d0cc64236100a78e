package agent

import (
	"context"
	"io/fs"
	"strings"

	"github.com/quirehq/quire/skills"
	"github.com/quirehq/quire/workspace"
)

// WorkspaceChecks is the check of a pushed tree, the daemon's push
// validator (given to the git endpoint through gitsync.TreeValidator):
// Check on the tree, with the file rules on the files the push adds or
// modifies (paths) and, for a branch other than proposals/*, the content
// checks too, of the skills only those the push changes. ref is the
// full name of the ref the push moves. Only errors refuse a push.
func WorkspaceChecks(opts CheckOptions) func(ctx context.Context, ref string, tree fs.FS, paths []string) []workspace.Problem {
	return func(ctx context.Context, ref string, tree fs.FS, paths []string) []workspace.Problem {
		o := opts
		o.Paths = paths
		o.FilesOnly = filesOnlyRef(ref)
		if o.CheckAgent == nil {
			o.CheckAgent = changedSkillsCheck(paths)
		}
		return workspace.Errors(Check(ctx, tree, o))
	}
}

// filesOnlyRef reports whether a ref gets the file rules alone, without
// the content checks: a tag, a note, a proposal branch (the daemon's
// proposals/<agent>/<n>, which nothing deploys).
func filesOnlyRef(ref string) bool {
	return !strings.HasPrefix(ref, "refs/heads/") || strings.HasPrefix(ref, "refs/heads/proposals/")
}

// SharedSkillsChecks is the validation of a push to the shared skills
// repository (workspace.SharedSkillsRepo): the file rules on the changed
// files and, on a deployable branch, skills.CheckShared (each SKILL.md,
// its visibility, the grants file). Only errors refuse the push.
func SharedSkillsChecks() func(ctx context.Context, ref string, tree fs.FS, paths []string) []workspace.Problem {
	return func(ctx context.Context, ref string, tree fs.FS, paths []string) []workspace.Problem {
		probs := workspace.CheckFiles(ctx, tree, paths)
		if !filesOnlyRef(ref) {
			probs = append(probs, skills.CheckShared(tree, ".")...)
		}
		return workspace.Errors(probs)
	}
}
