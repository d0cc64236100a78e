package workspace

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// CodeCaseCollision is the code of the problem of two names in one
// directory that differ only in case.
const CodeCaseCollision = "case-collision"

// The rule on case, the one place it is written: no two names in one
// directory of a workspace may differ only in case (SOUL.md and soul.md,
// skills/PDF and skills/pdf). macOS and Windows file systems are
// case-insensitive by default: such a tree cannot be checked out there
// (one name overwrites the other), so the person who edits it on a Mac or
// a PC would read, preview and push something other than what is
// committed. Names are compared as strings.ToLower makes them.

// caseCollisions returns the problems of a directory's listing es (dir is
// its slash path, "." for the root), for every entry whose name is
// another's but for case: each is the problem of an entry other than the
// first of its group in byte order, and names that first one. Only the
// groups that hold one of names are reported when names is not nil (the
// push and a write check the changed paths only; es is then what
// ReadDirFolded found like them), and a collision of a name in names
// with one not in it is then the problem of the name in names, whatever
// their order: a write of notes.md beside NOTES.md and one of NOTES.md
// beside notes.md are both refused, where only the first was.
func caseCollisions(dir string, es []fs.DirEntry, names map[string]bool) []Problem {
	if len(es) < 2 {
		return nil
	}
	groups := make(map[string][]string, len(es))
	var keys []string
	for _, e := range es {
		k := strings.ToLower(e.Name())
		if len(groups[k]) == 0 {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], e.Name())
	}
	var out []Problem
	for _, k := range keys {
		g := groups[k]
		if len(g) < 2 || names != nil && !anyIn(g, names) {
			continue
		}
		first := slicesMin(g)
		for _, n := range g {
			switch {
			case n == first:
			case names != nil && names[first] && !names[n]:
				out = append(out, caseCollision(path.Join(dir, n), path.Join(dir, first)))
			default:
				out = append(out, caseCollision(path.Join(dir, first), path.Join(dir, n)))
			}
		}
	}
	return out
}

// caseCollision is the problem of b, whose name differs from a's only in
// case.
func caseCollision(a, b string) Problem {
	return Problem{Path: b, Severity: SeverityError, Code: CodeCaseCollision,
		Message: fmt.Sprintf("%s and %s differ only in case: they cannot both be checked out on macOS or Windows (case-insensitive file systems), where one would overwrite the other; rename or remove one", a, b)}
}

func anyIn(g []string, names map[string]bool) bool {
	for _, n := range g {
		if names[n] {
			return true
		}
	}
	return false
}

func slicesMin(g []string) string {
	m := g[0]
	for _, n := range g[1:] {
		m = min(m, n)
	}
	return m
}

// caseCollisionsOf returns the case collisions of every element of the
// paths (each directory on the way listed once), for a check of some
// paths only: a new soul.md collides with the SOUL.md already there; or
// with leaves, those in each path's own directory only.
func caseCollisionsOf(fsys fs.FS, paths []string, leaves bool) []Problem {
	byDir := map[string]map[string]bool{}
	for _, p := range paths {
		if !fs.ValidPath(p) || p == "." {
			continue
		}
		if leaves {
			dir := path.Dir(p)
			if byDir[dir] == nil {
				byDir[dir] = map[string]bool{}
			}
			byDir[dir][path.Base(p)] = true
			continue
		}
		for dir, rest := ".", p; ; {
			elem, more, _ := strings.Cut(rest, "/")
			if byDir[dir] == nil {
				byDir[dir] = map[string]bool{}
			}
			byDir[dir][elem] = true
			if more == "" {
				break
			}
			dir, rest = path.Join(dir, elem), more
		}
	}
	var out []Problem
	for dir, names := range byDir {
		es, err := ReadDirFolded(fsys, dir, lowered(names))
		if err != nil {
			continue // a deleted directory, or one the file rules report
		}
		out = append(out, caseCollisions(dir, es, names)...)
	}
	return out
}

// lowered is names as strings.ToLower makes them, each once.
func lowered(names map[string]bool) []string {
	out := make([]string, 0, len(names))
	for n := range names {
		if k := strings.ToLower(n); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// FoldedDirFS is a file system that finds a directory's entries by their
// names as strings.ToLower makes them, without listing the directory: a
// write into one user's directory among thousands is checked against
// the few names like its own.
type FoldedDirFS interface {
	fs.FS
	// ReadDirFolded returns the entries of dir whose lowered names are
	// among lower (lowered names, each once), sorted by name.
	ReadDirFolded(dir string, lower []string) ([]fs.DirEntry, error)
}

// ReadDirFolded returns the entries of dir in fsys whose lowered names
// are among lower, sorted by name: through fsys's ReadDirFolded when it
// is a FoldedDirFS, else from its listing.
func ReadDirFolded(fsys fs.FS, dir string, lower []string) ([]fs.DirEntry, error) {
	if f, ok := fsys.(FoldedDirFS); ok {
		return f.ReadDirFolded(dir, lower)
	}
	es, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var out []fs.DirEntry
	for _, e := range es {
		if slices.Contains(lower, strings.ToLower(e.Name())) {
			out = append(out, e)
		}
	}
	return out, nil
}
