package memory

import (
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"errors"
	"io/fs"
	"path"
	"slices"
	"strings"
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
// and again as it grows (the daemon's indexer). On an FS that implements
// FileIDs, a directory of documents (the agent's, or a user's) whose id
// is that of the last call gives that call's documents and problems
// without being walked: under appends, only the directories of the users
// appended to are. One whose id changed is walked again, and each of its
// documents whose content id is the same as at the last call is taken
// from that call, not read and hashed again: an append to a user's
// daily log reads that log, not every log of the user's history.
//
// The cache is updated in place, so a call costs what changed plus a
// look-up per user directory, not a copy of every user's entry; a call
// that succeeds drops the directories it no longer found. The zero
// value is ready to use; it is safe for concurrent use (calls take
// turns).
type DocumentCache struct {
	mu     sync.Mutex
	call   uint64                // the number of the last call
	scopes map[string]*scopeRead // directory → what it held when last walked
	// users is what each directory name of the last call's users/ is,
	// for the directory usersDir; read again when usersDir changes.
	usersDir string
	users    map[string]*userDirRead
}

// userDirRead is a userDir and the number of the last call that found
// it.
type userDirRead struct {
	userDir
	seen uint64
}

// scopeRead is what scopeDocuments found in one directory (the agent's
// or a user's) the last time it was walked.
type scopeRead struct {
	id       fileID
	docs     []Document
	docIDs   []fileID // the content id of each of docs
	problems []workspace.Problem
	// byPath is the index in docs of each document's path, made when
	// the directory is walked again and holds many documents.
	byPath map[string]int
	// seen is the number of the last call that found the directory.
	seen uint64
	// grown is the path of the document of docs last read as a changed
	// version of one the walk before found, and state its SHA-256 state
	// after its text: a version that extends it is hashed for what it
	// adds (under appends, a user's log of the day). One a directory:
	// states stay few however many logs the users keep.
	grown string
	state []byte
}

// fileID is a content id FileIDs gave, or none (ok false).
type fileID struct {
	id string
	ok bool
}

// Documents is the package's Documents, reading only what changed since
// the last call.
func (c *DocumentCache) Documents(fsys fs.FS, dir string) ([]Document, []workspace.Problem, error) {
	ids, ok := fsys.(FileIDs)
	if !ok {
		return Documents(fsys, dir)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.scopes == nil {
		c.scopes = map[string]*scopeRead{}
	}
	c.call++
	if usersDir := path.Join(dir, workspace.UsersDir); c.users == nil || c.usersDir != usersDir {
		c.usersDir, c.users = usersDir, map[string]*userDirRead{}
	}
	rd := &docReads{ids: ids, scopes: c.scopes, call: c.call, users: c.users}
	docs, problems, err := documents(fsys, dir, rd)
	if err != nil {
		// What the call stored is right by its ids: the next call that
		// succeeds drops what is gone.
		return nil, nil, err
	}
	if rd.found < len(c.scopes) {
		for k, sr := range c.scopes {
			if sr.seen != c.call {
				delete(c.scopes, k)
			}
		}
	}
	if rd.usersFound < len(c.users) {
		for k, u := range c.users {
			if u.seen != c.call {
				delete(c.users, k)
			}
		}
	}
	return docs, problems, nil
}

// docReads is one DocumentCache call: the cache's directories, updated
// as the call finds them. A nil *docReads reads everything.
type docReads struct {
	ids    FileIDs
	scopes map[string]*scopeRead
	call   uint64
	// found counts the directories of scopes this call found.
	found int
	// users is the cache's user directories by name, of which the call
	// found usersFound.
	users      map[string]*userDirRead
	usersFound int
	// last and next are the directory being walked as the last walk
	// found it (nil: not walked before) and as this one does.
	last, next *scopeRead
}

// scope is scopeDocuments of the directory root, taken from the last
// call when root's id is the same.
func (r *docReads) scope(fsys fs.FS, root, scope, user string) ([]Document, []workspace.Problem, error) {
	if r == nil {
		return scopeDocuments(fsys, root, scope, user, nil)
	}
	id := r.scopeID(fsys, root, scope)
	last := r.scopes[root]
	if last != nil && id.ok && last.id == id {
		last.seen = r.call
		r.found++
		return last.docs, last.problems, nil
	}
	r.last, r.next = last, &scopeRead{id: id, seen: r.call}
	defer func() { r.last, r.next = nil, nil }()
	docs, problems, err := scopeDocuments(fsys, root, scope, user, r)
	if err != nil {
		return nil, nil, err
	}
	next := r.next
	next.docs, next.problems = slices.Clip(docs), slices.Clip(problems)
	r.scopes[root] = next
	r.found++
	return docs, problems, nil
}

// scopeID is the id of what the directory root holds of scope's
// documents: for a user's directory, its own id; for the agent's, whose
// directory holds users/ too, the ids of its memory files and of its
// memory/ directory, so that an append to a user's log leaves it as it
// was. A file FileIDs cannot name but that exists gives no id (the
// directory is walked).
func (r *docReads) scopeID(fsys fs.FS, root, scope string) fileID {
	if scope != "" {
		return r.fileID(root)
	}
	var b strings.Builder
	for _, name := range []string{workspace.MemoryFile, workspace.MemoryFallbackFile, workspace.MemoryDir} {
		full := path.Join(root, name)
		id := r.fileID(full)
		if !id.ok {
			if _, err := fs.Stat(fsys, full); !errors.Is(err, fs.ErrNotExist) {
				return fileID{}
			}
			id.id = "-"
		}
		b.WriteString(id.id)
		b.WriteByte(' ')
	}
	return fileID{id: b.String(), ok: true}
}

// userDir is readUserDir of name, as the last call read it when it
// found name too.
func (r *docReads) userDir(usersDir, name string) userDir {
	if r == nil {
		return readUserDir(usersDir, name)
	}
	u := r.users[name]
	if u == nil {
		u = &userDirRead{userDir: readUserDir(usersDir, name)}
		r.users[name] = u
	}
	if u.seen != r.call {
		u.seen = r.call
		r.usersFound++
	}
	return u.userDir
}

// fileID is name's content id.
func (r *docReads) fileID(name string) fileID {
	if r == nil {
		return fileID{}
	}
	id, ok := r.ids.FileID(name)
	return fileID{id: id, ok: ok}
}

// cached is the document at rel (a path relative to the directory being
// walked, full path name) as the last walk of that directory read it,
// when its content id is the same (ok), or with another (d is that
// version, to check the new one against); id is the content id.
func (r *docReads) cached(name, rel string) (d Document, id fileID, ok bool) {
	if r == nil {
		return Document{}, fileID{}, false
	}
	id = r.fileID(name)
	last := r.last
	if last == nil {
		return Document{}, id, false
	}
	i := last.index(rel)
	if i < 0 {
		return Document{}, id, false
	}
	return last.docs[i], id, id.ok && last.docIDs[i] == id
}

// index is the index in docs of the document at rel, or -1.
func (sr *scopeRead) index(rel string) int {
	const scan = 8 // up to which a scan beats making a map
	if len(sr.docs) <= scan {
		return slices.IndexFunc(sr.docs, func(d Document) bool { return d.Path == rel })
	}
	if sr.byPath == nil {
		sr.byPath = make(map[string]int, len(sr.docs))
		for i, d := range sr.docs {
			sr.byPath[d.Path] = i
		}
	}
	if i, ok := sr.byPath[rel]; ok {
		return i
	}
	return -1
}

// newDocument is NewDocument(rel, user, string(b)) for a file the walk
// read, prev its version at the last walk of the directory ("" none).
// When the last walk kept prev's hash state (grown) and b extends prev,
// only what b adds is hashed; a changed document's hash state is kept
// for the next walk.
func (r *docReads) newDocument(rel, user, prev string, b []byte) Document {
	if r == nil || r.last == nil {
		return NewDocument(rel, user, string(b))
	}
	h := sha256.New()
	rest := b
	if last := r.last; last.grown == rel && len(b) >= len(prev) && string(b[:len(prev)]) == prev &&
		h.(encoding.BinaryUnmarshaler).UnmarshalBinary(last.state) == nil {
		rest = b[len(prev):]
	} else {
		h.Reset()
	}
	h.Write(rest)
	if state, err := h.(encoding.BinaryMarshaler).MarshalBinary(); err == nil {
		r.next.grown, r.next.state = rel, state
	}
	sum := h.Sum(nil)
	return Document{Path: rel, User: user, Text: string(b), Hash: hex.EncodeToString(sum[:16])}
}

// keepState carries the last walk's hash state over to this one when
// the document it is of is unchanged.
func (r *docReads) keepState(rel string) {
	if r != nil && r.last != nil && r.last.grown == rel && r.next.grown == "" {
		r.next.grown, r.next.state = rel, r.last.state
	}
}

// keep records the content id of the document the walk just added.
func (r *docReads) keep(id fileID) {
	if r != nil {
		r.next.docIDs = append(r.next.docIDs, id)
	}
}
