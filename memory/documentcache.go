package memory

import (
	"io/fs"
	"slices"
	"sync"

	"github.com/quirehq/quire/workspace"
)

// FileIDs is an fs.FS that names a file's content without reading it
// (a git snapshot: the blob's hash), and a directory's, by an id that
// changes whenever anything below it does (a git tree's hash). FileID
// reports false for a file or directory it cannot name, which is then
// read.
type FileIDs interface {
	fs.FS
	FileID(name string) (string, bool)
}

// DocumentCache is Documents for one agent whose memory is read again
// and again as it grows (the daemon's indexer): on an FS that implements
// FileIDs, a user directory whose path and id are those of the last call
// gives that call's documents and problems without being walked (under
// appends, only the directories of the users appended to are), and a
// document whose path and content id are those of the last call is taken
// from that call, not read and hashed again. Each call keeps only what
// it returned, so what no revision references any more is dropped. The
// zero value is ready to use; it is safe for concurrent use.
type DocumentCache struct {
	mu     sync.Mutex
	last   map[string]Document  // path + "\x00" + content id → document
	scopes map[string]scopeRead // user directory + "\x00" + its id → what it held
}

// scopeRead is what scopeDocuments found in one user directory.
type scopeRead struct {
	docs     []Document
	problems []workspace.Problem
}

// Documents is the package's Documents, reading only what changed since
// the last call.
func (c *DocumentCache) Documents(fsys fs.FS, dir string) ([]Document, []workspace.Problem, error) {
	ids, ok := fsys.(FileIDs)
	if !ok {
		return Documents(fsys, dir)
	}
	c.mu.Lock()
	last, scopes := c.last, c.scopes
	c.mu.Unlock()
	rd := &docReads{ids: ids, last: last, next: map[string]Document{}, lastScopes: scopes, nextScopes: map[string]scopeRead{}}
	docs, problems, err := documents(fsys, dir, rd)
	if err != nil {
		return nil, nil, err
	}
	c.mu.Lock()
	c.last, c.scopes = rd.next, rd.nextScopes
	c.mu.Unlock()
	return docs, problems, nil
}

// docReads is one DocumentCache call: the last call's documents and user
// directories, and this one's. A nil *docReads reads everything.
type docReads struct {
	ids                    FileIDs
	last, next             map[string]Document
	lastScopes, nextScopes map[string]scopeRead
}

// scope is scopeDocuments of the user directory root, taken from the
// last call when root's id is the same. The documents of a directory
// taken so are not kept one by one: should it change, it is read again
// whole (one user's files).
func (r *docReads) scope(fsys fs.FS, root, scope, user string) ([]Document, []workspace.Problem, error) {
	k, ok := r.key(root)
	if !ok {
		return scopeDocuments(fsys, root, scope, user, r)
	}
	if sr, hit := r.lastScopes[k]; hit {
		r.nextScopes[k] = sr
		return sr.docs, sr.problems, nil
	}
	docs, problems, err := scopeDocuments(fsys, root, scope, user, r)
	if err == nil {
		r.nextScopes[k] = scopeRead{docs: slices.Clip(docs), problems: slices.Clip(problems)}
	}
	return docs, problems, err
}

func (r *docReads) key(name string) (string, bool) {
	if r == nil {
		return "", false
	}
	id, ok := r.ids.FileID(name)
	return name + "\x00" + id, ok
}

// cached is the document at name as the last call read it, when its
// content id is the same.
func (r *docReads) cached(name string) (Document, bool) {
	k, ok := r.key(name)
	if !ok {
		return Document{}, false
	}
	d, ok := r.last[k]
	if ok {
		r.next[k] = d
	}
	return d, ok
}

// keep records the document read at name for the next call.
func (r *docReads) keep(name string, d Document) {
	if k, ok := r.key(name); ok {
		r.next[k] = d
	}
}
