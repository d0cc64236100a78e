package memory

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/prompt/workspace"
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

// Problem is something wrong in a workspace that Documents skipped: a
// warning in workspace's one finding type, its Path relative to the agent
// directory.
type Problem = workspace.Problem

// NewDocument returns the document at path for user with text and its hash.
func NewDocument(path, user, text string) Document {
	return Document{Path: path, User: user, Text: text, Hash: Hash([]byte(text))}
}

// Documents returns the memory documents of the agent workspace at dir in
// fsys ("." for the root): MEMORY.md (memory.md when MEMORY.md is missing)
// and memory/**/*.md, for the agent and for every users/<dir>/ whose name
// decodes to a user id. User directories that do not decode are skipped and
// reported as problems. The result is sorted by user, then path.
func Documents(fsys fs.FS, dir string) ([]Document, []Problem, error) {
	var docs []Document
	var problems []Problem
	agentDocs, err := scopeDocuments(fsys, dir, "")
	if err != nil {
		return nil, nil, err
	}
	docs = append(docs, agentDocs...)
	usersDir := path.Join(dir, "users")
	entries, err := fs.ReadDir(fsys, usersDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("read %s: %w", usersDir, err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		user, err := prompt.DecodeID(e.Name())
		if err != nil {
			problems = append(problems, Problem{Path: workspace.UsersDir + "/" + e.Name(), Severity: workspace.SeverityWarning, Code: "user-dir-name",
				Message: fmt.Sprintf("not a user directory, skipped: %v", err)})
			continue
		}
		userDocs, err := scopeDocuments(fsys, path.Join(usersDir, e.Name()), user)
		if err != nil {
			return nil, nil, err
		}
		docs = append(docs, userDocs...)
	}
	sort.Slice(docs, func(i, j int) bool {
		if docs[i].User != docs[j].User {
			return docs[i].User < docs[j].User
		}
		return docs[i].Path < docs[j].Path
	})
	return docs, problems, nil
}

// scopeDocuments reads the memory documents directly under root.
func scopeDocuments(fsys fs.FS, root, user string) ([]Document, error) {
	var docs []Document
	read := func(rel string) (bool, error) {
		b, err := fs.ReadFile(fsys, path.Join(root, rel))
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("read %s: %w", path.Join(root, rel), err)
		}
		docs = append(docs, NewDocument(rel, user, string(b)))
		return true, nil
	}
	for _, name := range []string{"MEMORY.md", "memory.md"} {
		st, err := fs.Stat(fsys, path.Join(root, name))
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		if ok, err := read(name); err != nil {
			return nil, err
		} else if ok {
			break
		}
	}
	memDir := path.Join(root, "memory")
	err := fs.WalkDir(fsys, memDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == memDir && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipDir
			}
			return err
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(d.Name(), ".md") {
			return nil
		}
		rel := p
		if root != "." {
			rel = strings.TrimPrefix(p, root+"/")
		}
		_, err = read(rel)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("walk %s: %w", memDir, err)
	}
	return docs, nil
}
