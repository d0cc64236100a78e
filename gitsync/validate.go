package gitsync

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
)

// RefUpdate is one ref a push (or another source of new snapshots) moves.
// A zero Old creates the ref, a zero New deletes it.
type RefUpdate struct {
	Name     plumbing.ReferenceName
	Old, New plumbing.Hash
}

// Problem is one reason a pushed tree is refused. Path names the file
// ("" for the tree as a whole); Message says what is wrong and, for
// limits, the limit ("1.5 MiB exceeds the 1 MiB file limit").
type Problem struct {
	Path    string
	Message string
}

// String formats the problem as the client sees it on a remote: line.
func (p Problem) String() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// Validator decides whether a pushed tree may be deployed. It is called
// for every created or updated ref (not for deletions) before any object
// of the push is written or any ref moves; a non-empty result refuses
// that ref. tree reads the pushed commit through the push's objects;
// changed lists the files that differ from the ref's old commit (every
// file for a new ref).
type Validator interface {
	Validate(ctx context.Context, ref RefUpdate, tree *Snapshot, changed []Change) []Problem
}

// ValidatorFunc adapts a function to Validator.
type ValidatorFunc func(ctx context.Context, ref RefUpdate, tree *Snapshot, changed []Change) []Problem

// Validate calls f.
func (f ValidatorFunc) Validate(ctx context.Context, ref RefUpdate, tree *Snapshot, changed []Change) []Problem {
	return f(ctx, ref, tree, changed)
}

// Validators runs every validator in order and reports all their
// problems, so checks from other packages compose with the default ones.
type Validators []Validator

// Validate runs every validator.
func (vs Validators) Validate(ctx context.Context, ref RefUpdate, tree *Snapshot, changed []Change) []Problem {
	var out []Problem
	for _, v := range vs {
		if v == nil {
			continue
		}
		out = append(out, v.Validate(ctx, ref, tree, changed)...)
	}
	return out
}

// MaxFileBytes is the largest file a push may add or change (1 MiB).
const MaxFileBytes = 1 << 20

// IsContextFile reports whether a path is read as text into an agent's
// context: Markdown files (AGENTS.md, MEMORY.md, memory/*.md, SKILL.md,
// …) and agent.yaml. These must be valid UTF-8.
func IsContextFile(p string) bool {
	base := path.Base(p)
	return strings.EqualFold(path.Ext(base), ".md") || base == "agent.yaml" || base == "agent.yml"
}

// RepositoryChecks is the default validator: for every added or modified
// file it refuses symbolic links, files over MaxFileBytes and context
// files that are not valid UTF-8.
func RepositoryChecks() Validator {
	return ValidatorFunc(repositoryChecks)
}

func repositoryChecks(ctx context.Context, _ RefUpdate, tree *Snapshot, changed []Change) []Problem {
	return fileChecks(ctx, tree, changed, true)
}

// fileLimits refuses symbolic links and files over MaxFileBytes among the
// added or modified files.
func fileLimits(ctx context.Context, tree *Snapshot, changed []Change) []Problem {
	return fileChecks(ctx, tree, changed, false)
}

func fileChecks(ctx context.Context, tree *Snapshot, changed []Change, text bool) []Problem {
	var out []Problem
	for _, c := range changed {
		if c.Kind == Deleted {
			continue
		}
		if ctx.Err() != nil {
			return append(out, Problem{Message: "validation cancelled: " + ctx.Err().Error()})
		}
		info, err := tree.Stat(c.Path)
		if err != nil {
			out = append(out, Problem{Path: c.Path, Message: fmt.Sprintf("cannot read: %v", err)})
			continue
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			out = append(out, Problem{Path: c.Path, Message: "symbolic links are not allowed"})
			continue
		case info.Size() > MaxFileBytes:
			out = append(out, Problem{Path: c.Path, Message: fmt.Sprintf("%s exceeds the 1 MiB file limit (%d > %d bytes)", humanBytes(info.Size()), info.Size(), MaxFileBytes)})
			continue
		}
		if text && IsContextFile(c.Path) {
			b, err := tree.ReadFile(c.Path)
			if err != nil {
				out = append(out, Problem{Path: c.Path, Message: fmt.Sprintf("cannot read: %v", err)})
				continue
			}
			if !utf8.Valid(b) {
				out = append(out, Problem{Path: c.Path, Message: fmt.Sprintf("not valid UTF-8 (first bad byte at offset %d); context files must be UTF-8 text", firstInvalid(b))})
			}
		}
	}
	return out
}

func firstInvalid(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
