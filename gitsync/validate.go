package gitsync

import (
	"context"
	"fmt"
	"io/fs"
	"path"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/quirehq/quire/workspace"
)

// RefUpdate is one ref a push (or another source of new snapshots) moves.
// A zero Old creates the ref, a zero New deletes it.
type RefUpdate struct {
	// Repo is the hosted repository a push moves the ref of ("" for
	// other sources).
	Repo     string
	Name     plumbing.ReferenceName
	Old, New plumbing.Hash
}

// remoteLine formats a problem as the client sees it on a remote: line:
// path: [line N: ]message.
func remoteLine(p workspace.Problem) string {
	msg := p.Message
	if p.Line > 0 {
		msg = fmt.Sprintf("line %d: %s", p.Line, msg)
	}
	if p.Path == "" {
		return msg
	}
	return p.Path + ": " + msg
}

// Validator decides whether a pushed tree may be deployed. It is called
// for every created or updated ref (not for deletions) before any object
// of the push is written or any ref moves; a non-empty result refuses
// that ref. tree reads the pushed commit through the push's objects;
// changed lists the files that differ from the ref's old commit (every
// file for a new ref). Refs of one push in one directory (refs/heads,
// refs/tags, refs/heads/proposals/bot) that move from one commit to one
// commit are validated once: an answer may depend on the directory of a
// ref's name, not on its last element.
type Validator interface {
	Validate(ctx context.Context, ref RefUpdate, tree *Snapshot, changed []Change) []workspace.Problem
}

// ValidatorFunc adapts a function to Validator.
type ValidatorFunc func(ctx context.Context, ref RefUpdate, tree *Snapshot, changed []Change) []workspace.Problem

// Validate calls f.
func (f ValidatorFunc) Validate(ctx context.Context, ref RefUpdate, tree *Snapshot, changed []Change) []workspace.Problem {
	return f(ctx, ref, tree, changed)
}

// Validators runs every validator in order and reports all their
// problems, so checks from other packages compose with the default ones.
type Validators []Validator

// Validate runs every validator.
func (vs Validators) Validate(ctx context.Context, ref RefUpdate, tree *Snapshot, changed []Change) []workspace.Problem {
	var out []workspace.Problem
	for _, v := range vs {
		if v == nil {
			continue
		}
		out = append(out, v.Validate(ctx, ref, tree, changed)...)
	}
	return out
}

// TreeValidator adapts a check of pushed trees to a Validator: check is
// given the full name of the ref (refs/heads/main), the pushed tree and
// the paths of the files the push adds or modifies (every file for a new
// ref). Gitlinks, which the tree does not show, are refused besides.
func TreeValidator(check func(ctx context.Context, ref string, tree fs.FS, paths []string) []workspace.Problem) Validator {
	return ValidatorFunc(func(ctx context.Context, ref RefUpdate, tree *Snapshot, changed []Change) []workspace.Problem {
		return append(check(ctx, ref.Name.String(), tree, changedPaths(changed)), gitlinkProblems(changed)...)
	})
}

// RepositoryChecks is the default validator: the file rules
// (workspace.CheckFiles) on every added or modified file (no symbolic
// links, no file over MaxFileBytes, text files in UTF-8) and no gitlinks.
func RepositoryChecks() Validator {
	return TreeValidator(func(ctx context.Context, _ string, tree fs.FS, paths []string) []workspace.Problem {
		return workspace.CheckFiles(ctx, tree, paths)
	})
}

// CodeGitlink is the problem code of a gitlink (a submodule entry).
const CodeGitlink = "gitlink"

// gitlinkProblems refuses the gitlinks (submodules) among the added or
// modified entries: a Snapshot leaves them out, so the file rules never
// see them, and a workspace holds files only.
func gitlinkProblems(changed []Change) []workspace.Problem {
	var out []workspace.Problem
	for _, c := range changed {
		if c.Kind != Deleted && c.Mode == filemode.Submodule {
			out = append(out, workspace.Problem{Path: c.Path, Severity: workspace.SeverityError, Code: CodeGitlink,
				Message: "is a gitlink (a submodule): a workspace holds files only; remove it (git rm --cached " + c.Path + ") and commit the files themselves"})
		}
	}
	return out
}

// entryProblems applies the rules that need no content to the added or
// modified entries of a commit as it was pushed: names (no invalid UTF-8,
// no control characters), no symbolic links, no gitlinks. A push to main
// is checked so before it is merged with live, so what the merge would
// carry over or cannot read is refused with its own remote: line.
func entryProblems(changed []Change) []workspace.Problem {
	var out []workspace.Problem
	for _, c := range changed {
		if c.Kind == Deleted {
			continue
		}
		if bad := workspace.CheckName(c.Path); bad != nil {
			out = append(out, bad...)
			continue
		}
		if c.Mode == filemode.Symlink {
			out = append(out, workspace.CheckFile(c.Path, &fileInfo{name: path.Base(c.Path), mode: fs.ModeSymlink | 0o777}, nil)...)
		}
	}
	return append(out, gitlinkProblems(changed)...)
}

func changedPaths(changed []Change) []string {
	out := make([]string, 0, len(changed))
	for _, c := range changed {
		if c.Kind != Deleted {
			out = append(out, c.Path)
		}
	}
	return out
}

// fileLimits refuses symbolic links and files over MaxFileBytes among the
// added or modified files of a commit that is not deployed (an earlier
// commit of a push): they would be stored and served all the same.
func fileLimits(ctx context.Context, tree *Snapshot, changed []Change) []workspace.Problem {
	out := gitlinkProblems(changed)
	for _, p := range workspace.CheckFiles(ctx, tree, changedPaths(changed)) {
		if p.Code != workspace.CodeInvalidUTF8 && p.Code != workspace.CodeControlChar {
			out = append(out, p)
		}
	}
	return out
}
