package workspace

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"sort"
)

// CodeCancelled is the code of the problem of a check cut short by its
// context: the tree was not checked whole, so it counts as an error.
const CodeCancelled = "cancelled"

// CheckFiles applies the file rules (CheckName, then CheckFile) to the
// files of fsys: to every file but those under .git when paths is nil,
// else to paths, skipping those that do not exist (deleted files); and
// the rule on case (no two names in a directory that differ only in
// case) to every directory, or to the directories on the way to paths. The
// problems come sorted by path and line, each once; a check cut short by
// ctx ends with a CodeCancelled error.
func CheckFiles(ctx context.Context, fsys fs.FS, paths []string) []Problem {
	if paths == nil {
		out := checkAllFiles(ctx, fsys)
		if ctx.Err() != nil {
			out = append(out, Cancelled(ctx))
		}
		return SortProblems(dedup(out))
	}
	return checkPaths(ctx, fsys, paths, false, nil)
}

// CheckPaths is what CheckFiles(ctx, fsys, paths) finds about paths
// themselves, the problems whose Path is one of them (and the
// CodeCancelled error of a check cut short), for a caller that refuses a
// change on those alone: the daemon's writes. A case collision in a
// directory above a path names a directory, never one of paths, so only
// each path's own directory is looked at, not the large ones above it.
// checked gives, by path, how many bytes at the start of the file's
// content are a text that passed the rule on content (CheckContentAfter;
// nil: none).
func CheckPaths(ctx context.Context, fsys fs.FS, paths []string, checked map[string]int) []Problem {
	return checkPaths(ctx, fsys, paths, true, checked)
}

// checkPaths applies the file rules to paths and the rule on case to the
// directories on the way to them, or with own to each path's own
// directory, keeping only the problems of paths.
func checkPaths(ctx context.Context, fsys fs.FS, paths []string, own bool, checked map[string]int) []Problem {
	var out []Problem
	for _, p := range paths {
		if ctx.Err() != nil {
			break
		}
		out = append(out, checkOneFile(fsys, p, checked[p])...)
	}
	if ctx.Err() == nil {
		out = append(out, caseCollisionsOf(fsys, paths, own)...)
	}
	if own {
		set := make(map[string]bool, len(paths))
		for _, p := range paths {
			set[p] = true
		}
		out = slices.DeleteFunc(out, func(pr Problem) bool { return !set[pr.Path] })
	}
	if ctx.Err() != nil {
		out = append(out, Cancelled(ctx))
	}
	return SortProblems(dedup(out))
}

// Cancelled is the problem of a check that ctx cut short.
func Cancelled(ctx context.Context) Problem {
	return Problem{Severity: SeverityError, Code: CodeCancelled, Message: "validation cancelled: " + ctx.Err().Error()}
}

// checkAllFiles applies the file rules to every file of fsys but .git.
func checkAllFiles(ctx context.Context, fsys fs.FS) []Problem {
	var out []Problem
	_ = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if err != nil {
			out = append(out, unreadable(p, err))
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if bad := CheckName(p); bad != nil && p != "." {
			out = append(out, bad...)
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if d.Name() == ".git" && p != "." {
				return fs.SkipDir
			}
			if es, err := fs.ReadDir(fsys, p); err == nil {
				out = append(out, caseCollisions(p, es, nil)...)
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			// A file that went away while the tree was walked is not there.
			if !errors.Is(err, fs.ErrNotExist) {
				out = append(out, unreadable(p, err))
			}
			return nil
		}
		out = append(out, CheckFile(p, info, func() ([]byte, error) { return fs.ReadFile(fsys, p) })...)
		return nil
	})
	return out
}

// checkOneFile applies the file rules to p, if it exists.
func checkOneFile(fsys fs.FS, p string, checked int) []Problem {
	if bad := CheckName(p); bad != nil {
		return bad
	}
	info, err := fs.Stat(fsys, p)
	if info == nil {
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return []Problem{unreadable(p, err)}
	}
	return checkFile(p, info, func() ([]byte, error) { return fs.ReadFile(fsys, p) }, checked)
}

func unreadable(p string, err error) Problem {
	var pe *fs.PathError
	if errors.As(err, &pe) && fs.ValidPath(pe.Path) {
		p, err = pe.Path, pe.Err
	}
	if p == "." {
		p = ""
	}
	return Problem{Path: p, Severity: SeverityError, Code: CodeUnreadable, Message: "cannot read: " + err.Error()}
}

// dedup keeps the first of each problem of ps, in order.
func dedup(ps []Problem) []Problem {
	seen := make(map[Problem]bool, len(ps))
	out := ps[:0:0]
	for _, p := range ps {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// SortProblems sorts ps by path and line, keeping the order of problems
// at one place, and returns it.
func SortProblems(ps []Problem) []Problem {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Path != ps[j].Path {
			return ps[i].Path < ps[j].Path
		}
		return ps[i].Line < ps[j].Line
	})
	return ps
}
