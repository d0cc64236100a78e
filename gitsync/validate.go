package gitsync

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

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

// checkMemo remembers what check answered for a commit, so a push of many
// refs that name one commit (a mirror, a tag per release) validates it
// once: a flood of refs costs one validation, not one per ref.
type checkMemo map[checkKey]string

// checkKey is what check's answer depends on besides the objects.
type checkKey struct {
	old, new plumbing.Hash
	dir      string // the directory of the ref's name (see Validator)
}

// check is h.check, answered from the memo for a ref whose commit, old
// value and kind an earlier ref of the push had (a refusal points at the
// earlier ref's remote: lines instead of repeating them).
func (m checkMemo) check(ctx context.Context, h *Host, ov *overlay, c command, out *pushOutput) string {
	k := checkKey{old: c.Old, new: c.New, dir: path.Dir(c.Name.String())}
	if reason, ok := m[k]; ok {
		if reason != "" {
			out.say("error: %s refused: same commit as a ref refused above (%s)", c.Name.Short(), reason)
		}
		return reason
	}
	reason := h.check(ctx, ov, c, out)
	if ctx.Err() == nil {
		m[k] = reason
	}
	return reason
}

// check validates one command against the old value the client sent:
// "" accepts it.
func (h *Host) check(ctx context.Context, ov *overlay, c command, out *pushOutput) string {
	cur := c.Old
	if c.isDelete() {
		return ""
	}
	obj, err := ov.EncodedObject(plumbing.AnyObject, c.New)
	if err != nil {
		return "missing necessary objects"
	}
	commit := c.New
	if obj.Type() == plumbing.TagObject {
		tag, err := object.DecodeTag(ov, obj)
		if err != nil {
			return "bad tag object"
		}
		if tag.TargetType != plumbing.CommitObject {
			return "" // a tag of a tree or blob: nothing to deploy
		}
		commit = tag.Target
	} else if obj.Type() != plumbing.CommitObject {
		if strings.HasPrefix(c.Name.String(), "refs/heads/") {
			return "not a commit"
		}
		return ""
	}
	old := commitOrZero(ov, cur)
	tree, err := ov.snapshot(commit)
	if err != nil {
		return "bad commit"
	}
	changed, err := changes(ctx, ov, old, commit)
	if err != nil {
		return "cannot compare trees"
	}
	problems := h.opts.Validator.Validate(ctx, RefUpdate{Repo: out.repo, Name: c.Name, Old: c.Old, New: c.New}, tree, changed)
	problems = append(problems, historyProblems(ctx, ov, commit)...)
	return reportProblems(c, problems, out)
}

// commitOrZero is h when it names a commit, zero otherwise.
func commitOrZero(ov *overlay, h plumbing.Hash) plumbing.Hash {
	if h.IsZero() {
		return h
	}
	if o, err := ov.EncodedObject(plumbing.AnyObject, h); err != nil || o.Type() != plumbing.CommitObject {
		return plumbing.ZeroHash
	}
	return h
}

// reportProblems writes a refused ref's problems as remote: lines and
// returns the refusal reason ("" when there are none).
func reportProblems(c command, problems []workspace.Problem, out *pushOutput) string {
	if len(problems) == 0 {
		return ""
	}
	out.say("error: %s refused:", c.Name.Short())
	for _, p := range problems {
		out.say("error:   %s", oneLine(remoteLine(p)))
	}
	reason := oneLine(remoteLine(problems[0]))
	if len(problems) > 1 {
		reason += fmt.Sprintf(" (and %d more)", len(problems)-1)
	}
	return reason
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

// historyProblems applies the file limits (no symbolic links, no file
// over MaxFileBytes) to every commit of the push before tip: a file added
// and removed again within one push is refused too, since the push would
// store and serve it. Only commits that came with the push are walked;
// each is compared with its first parent.
func historyProblems(ctx context.Context, ov *overlay, tip plumbing.Hash) []workspace.Problem {
	var out []workspace.Problem
	seen := map[plumbing.Hash]bool{tip: true}
	c, err := object.GetCommit(ov, tip)
	if err != nil {
		return nil // the tip's own checks report it
	}
	stack := append([]plumbing.Hash(nil), c.ParentHashes...)
	for len(stack) > 0 && len(out) < 20 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[h] || !ov.pushed(h) {
			continue
		}
		seen[h] = true
		if err := ctx.Err(); err != nil {
			return append(out, workspace.Problem{Message: "validation cancelled: " + err.Error()})
		}
		c, err := object.GetCommit(ov, h)
		if err != nil {
			out = append(out, workspace.Problem{Message: fmt.Sprintf("commit %s: %v", h, err)})
			continue
		}
		stack = append(stack, c.ParentHashes...)
		var parent plumbing.Hash
		if len(c.ParentHashes) > 0 {
			parent = c.ParentHashes[0]
		}
		changed, err := changes(ctx, ov, parent, h)
		if err != nil {
			out = append(out, workspace.Problem{Message: fmt.Sprintf("commit %s: cannot compare trees: %v", h, err)})
			continue
		}
		tree, err := ov.snapshot(h)
		if err != nil {
			out = append(out, workspace.Problem{Message: fmt.Sprintf("commit %s: %v", h, err)})
			continue
		}
		for _, p := range fileLimits(ctx, tree, changed) {
			p.Message += fmt.Sprintf(" (in commit %s, an earlier commit of this push)", h.String()[:12])
			out = append(out, p)
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

func changedPaths(changed []Change) []string {
	out := make([]string, 0, len(changed))
	for _, c := range changed {
		if c.Kind != Deleted {
			out = append(out, c.Path)
		}
	}
	return out
}
