package memory

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/quirehq/quire/workspace"
)

// Document is one memory file of an agent workspace.
type Document struct {
	// Path is the slash-separated path relative to the scope's root: the
	// agent directory for agent-level memory, users/<dir>/ for a user's.
	Path string
	// User is the owner's user id for a per-user document, "" otherwise.
	User string
	// Text is the document's content.
	Text string
	// Hash is Hash of Text.
	Hash string
}

// CodeNotIndexed is the code of the error Documents reports for a memory
// file it leaves out of the index: its content is not valid, printable
// UTF-8 (workspace.CheckText: a NUL cannot be stored in PostgreSQL), or
// its name or its user's id holds a control character. Such a file got
// past the rules (pushed before them, or in a --dir working tree); it is
// skipped so that the rest of the agent's memory is indexed.
const CodeNotIndexed = "memory-not-indexed"

// NewDocument returns the document at path for user with text and its hash.
func NewDocument(path, user, text string) Document {
	return Document{Path: path, User: user, Text: text, Hash: hashString(text)}
}

// Documents returns the memory documents of the agent workspace at dir in
// fsys ("." for the root): MEMORY.md (memory.md when MEMORY.md is missing)
// and memory/**/*.md, for the agent and for every users/<dir>/ whose name
// decodes to a user id. User directories that do not decode and files no
// store can hold (CodeNotIndexed) are skipped and reported as problems. The
// result is sorted by user, then path.
func Documents(fsys fs.FS, dir string) ([]Document, []workspace.Problem, error) {
	return documents(fsys, dir, nil)
}

func documents(fsys fs.FS, dir string, rd *docReads) ([]Document, []workspace.Problem, error) {
	var docs []Document
	var problems []workspace.Problem
	agentDocs, probs, err := rd.scope(fsys, dir, "", "")
	if err != nil {
		return nil, nil, err
	}
	docs = append(docs, agentDocs...)
	problems = append(problems, probs...)
	usersDir := path.Join(dir, workspace.UsersDir)
	entries, err := fs.ReadDir(fsys, usersDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("read %s: %w", usersDir, err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		ud := rd.userDir(usersDir, e.Name())
		if ud.problem != nil {
			problems = append(problems, *ud.problem)
			continue
		}
		userDocs, probs, err := rd.scope(fsys, ud.root, ud.scope, ud.user)
		if err != nil {
			return nil, nil, err
		}
		docs = append(docs, userDocs...)
		problems = append(problems, probs...)
	}
	if !slices.IsSortedFunc(docs, CompareDocuments) {
		slices.SortFunc(docs, CompareDocuments)
	}
	return docs, problems, nil
}

// CompareDocuments orders documents as Documents returns them: by user
// ("" for the agent's own first), then path.
func CompareDocuments(a, b Document) int {
	return cmp.Or(cmp.Compare(a.User, b.User), cmp.Compare(a.Path, b.Path))
}

// userDir is what the directory name of users/ in usersDir is: the
// directory's path, its scope and its user, or the problem that has it
// skipped.
type userDir struct {
	root, scope, user string
	problem           *workspace.Problem
}

// readUserDir reads the user directory name of usersDir.
func readUserDir(usersDir, name string) userDir {
	scope := workspace.UsersDir + "/" + name
	if bad := workspace.CheckName(scope); bad != nil {
		p := notIndexed(bad[0].Path, "%s", bad[0].Message)
		return userDir{problem: &p}
	}
	user, err := workspace.DecodeID(name)
	var te *workspace.TextError
	if errors.As(err, &te) {
		p := notIndexed(scope, "the directory's user id holds a %v", te)
		return userDir{problem: &p}
	}
	if err != nil {
		return userDir{problem: &workspace.Problem{Path: scope, Severity: workspace.SeverityWarning, Code: "user-dir-name",
			Message: fmt.Sprintf("not a user directory, skipped: %v", err)}}
	}
	return userDir{root: path.Join(usersDir, name), scope: scope, user: user}
}

// scopeDocuments reads the memory documents directly under root, whose
// path relative to the agent directory is scope ("" for the agent's own).
func scopeDocuments(fsys fs.FS, root, scope, user string, rd *docReads) ([]Document, []workspace.Problem, error) {
	var docs []Document
	var problems []workspace.Problem
	read := func(rel string) (bool, error) {
		name := path.Join(root, rel)
		d, id, ok := rd.cached(name, rel)
		if !ok {
			b, err := fs.ReadFile(fsys, name)
			if errors.Is(err, fs.ErrNotExist) {
				return false, nil
			}
			if err != nil {
				return false, fmt.Errorf("read %s: %w", name, err)
			}
			if p, bad := checkDocument(path.Join(scope, rel), d.Text, b); bad {
				problems = append(problems, p)
				return true, nil
			}
			d = rd.newDocument(rel, user, d.Text, b)
		} else {
			rd.keepState(rel)
		}
		d.Path, d.User = rel, user
		docs = append(docs, d)
		rd.keep(id)
		return true, nil
	}
	for _, name := range []string{workspace.MemoryFile, workspace.MemoryFallbackFile} {
		st, err := fs.Stat(fsys, path.Join(root, name))
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		if ok, err := read(name); err != nil {
			return nil, nil, err
		} else if ok {
			break
		}
	}
	memDir := path.Join(root, workspace.MemoryDir)
	err := fs.WalkDir(fsys, memDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == memDir && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipDir
			}
			return err
		}
		rel := p
		if root != "." {
			rel = strings.TrimPrefix(p, root+"/")
		}
		if d.IsDir() {
			// A directory with a bad name: nothing below it is read.
			if bad := workspace.CheckName(path.Join(scope, rel)); bad != nil {
				problems = append(problems, notIndexed(bad[0].Path, "%s", bad[0].Message))
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(d.Name(), ".md") {
			return nil
		}
		_, err = read(rel)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("walk %s: %w", memDir, err)
	}
	return docs, problems, nil
}

// checkDocument applies the rules a memory file obeys to be indexed, p
// being its path relative to the agent directory: the workspace's rules
// on names (workspace.CheckName) and on a text file's content
// (workspace.CheckContent), which keep out what no store can hold. prev
// is the file's content that passed them before ("" none): when b
// extends it (an append to a log), only what b adds is scanned
// (workspace.CheckContentAfter). It returns the problem of a file that
// breaks them, as CodeNotIndexed.
func checkDocument(p, prev string, b []byte) (workspace.Problem, bool) {
	checked := 0
	if len(b) >= len(prev) && string(b[:len(prev)]) == prev {
		checked = len(prev)
	}
	bad := workspace.CheckName(p)
	if bad == nil {
		if prob, ok := workspace.CheckContentAfter(p, b, checked); ok {
			bad = []workspace.Problem{prob}
		}
	}
	if bad == nil {
		return workspace.Problem{}, false
	}
	prob := bad[0]
	prob.Code, prob.Message = CodeNotIndexed, "not indexed: "+prob.Message
	return prob, true
}

// notIndexed is the CodeNotIndexed error about path p.
func notIndexed(p, format string, args ...any) workspace.Problem {
	return workspace.Problem{Path: p, Severity: workspace.SeverityError, Code: CodeNotIndexed,
		Message: "not indexed: " + fmt.Sprintf(format, args...)}
}
