package daemon

import (
	"bytes"
	"errors"
	"io/fs"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/templates"
	"github.com/quirehq/quire/workspace"
)

// seedFS is a deployment's tree as requests read it: a user whose
// directory does not exist yet reads their seed files
// (templates.UserFiles: USER.md and BOOTSTRAP.md) there, the same bytes
// the first write for that user commits. A prompt read never writes.
// Listings (ReadDir, the memory index) show only what is stored.
type seedFS struct {
	base   fs.FS
	agents []*prompt.Agent // set once, before the deployment is shared
}

// seedFiles returns the seed file name → content of the user whose
// directory is userDir in agent a, when that directory does not exist.
func seedFiles(base fs.FS, a *prompt.Agent, userDir string) map[string][]byte {
	if _, err := fs.Stat(base, userDir); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	agentUser, err := fs.ReadFile(base, joinSlash(a.Dir, workspace.UserFile))
	if err != nil {
		agentUser = nil
	}
	return templates.Seeds(a.Config.Type, agentUser)
}

// seed returns the virtual content of name, if it is a seed file.
func (s *seedFS) seed(name string) ([]byte, bool) {
	for _, a := range s.agents {
		prefix := joinSlash(a.Dir, workspace.UsersDir) + "/"
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		enc, file, ok := strings.Cut(rest, "/")
		if !ok || enc == "" || strings.Contains(file, "/") || (file != workspace.UserFile && file != workspace.BootstrapFile) {
			return nil, false
		}
		b, ok := seedFiles(s.base, a, prefix+enc)[file]
		return b, ok
	}
	return nil, false
}

// Open implements fs.FS.
func (s *seedFS) Open(name string) (fs.File, error) {
	f, err := s.base.Open(name)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return f, err
	}
	if b, ok := s.seed(name); ok {
		return &memFile{Reader: bytes.NewReader(b), info: memInfo{name: name[strings.LastIndex(name, "/")+1:], size: int64(len(b))}}, nil
	}
	return nil, err
}

// Stat implements fs.StatFS: the base's (a git snapshot's reads no
// blob, where fs.Stat through Open would read the file), or a seed
// file's.
func (s *seedFS) Stat(name string) (fs.FileInfo, error) {
	fi, err := fs.Stat(s.base, name)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return fi, err
	}
	if b, ok := s.seed(name); ok {
		return memInfo{name: name[strings.LastIndex(name, "/")+1:], size: int64(len(b))}, nil
	}
	return nil, err
}

// ReadFile implements fs.ReadFileFS.
func (s *seedFS) ReadFile(name string) ([]byte, error) {
	b, err := fs.ReadFile(s.base, name)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return b, err
	}
	if b, ok := s.seed(name); ok {
		return bytes.Clone(b), nil
	}
	return nil, err
}

// FileID implements memory.FileIDs: a stored file's blob hash, when the
// base is a git snapshot (a seed file has none: it is read).
func (s *seedFS) FileID(name string) (string, bool) {
	b, ok := s.base.(interface {
		Hash(string) (plumbing.Hash, error)
	})
	if !ok {
		return "", false
	}
	h, err := b.Hash(name)
	if err != nil {
		return "", false
	}
	return h.String(), true
}

// ReadDir implements fs.ReadDirFS: what is stored.
func (s *seedFS) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(s.base, name) }

// ReadDirFolded implements workspace.FoldedDirFS, as ReadDir does.
func (s *seedFS) ReadDirFolded(name string, lower []string) ([]fs.DirEntry, error) {
	return workspace.ReadDirFolded(s.base, name, lower)
}

type memFile struct {
	*bytes.Reader
	info memInfo
}

func (f *memFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *memFile) Close() error               { return nil }

type memInfo struct {
	name string
	size int64
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) Mode() fs.FileMode  { return 0o444 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }

// withSeeds adds the seed files of user (in agent a) to writes when the
// user's directory does not exist in base yet: the first write for a
// user stores the files the user has been reading virtually. A seed the
// writes name themselves is left to them.
func withSeeds(base fs.FS, a *prompt.Agent, user string, writes []gitsync.FileWrite) []gitsync.FileWrite {
	if user == "" || len(writes) == 0 {
		return writes
	}
	dir, err := a.UserDir(user)
	if err != nil {
		return writes
	}
	seeds := seedFiles(base, a, dir)
	if len(seeds) == 0 {
		return writes
	}
	named := map[string]bool{}
	for _, w := range writes {
		named[w.Path] = true
	}
	var out []gitsync.FileWrite
	for _, name := range []string{workspace.UserFile, workspace.BootstrapFile} {
		p := joinSlash(dir, name)
		if b, ok := seeds[name]; ok && !named[p] {
			out = append(out, gitsync.FileWrite{Path: p, Content: b})
		}
	}
	return append(out, writes...)
}
