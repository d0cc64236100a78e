package daemon

import (
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	fdiff "github.com/go-git/go-git/v5/plumbing/format/diff"
	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// fileDiff is one file of a unified diff: its path and its content
// before and after (nil: absent on that side).
type fileDiff struct {
	path          string
	before, after []byte
}

// unifiedDiff renders files as a git-style unified diff with three
// lines of context; files whose content is equal are left out.
func unifiedDiff(files []fileDiff) string {
	var p diffPatch
	for _, f := range files {
		if f.before != nil && f.after != nil && string(f.before) == string(f.after) {
			continue
		}
		p = append(p, newFilePatch(f))
	}
	if len(p) == 0 {
		return ""
	}
	var sb strings.Builder
	if err := fdiff.NewUnifiedEncoder(&sb, fdiff.DefaultContextLines).Encode(p); err != nil {
		return "" // writes to a strings.Builder do not fail
	}
	return sb.String()
}

type diffPatch []fdiff.FilePatch

func (p diffPatch) FilePatches() []fdiff.FilePatch { return p }
func (p diffPatch) Message() string                { return "" }

type filePatch struct {
	from, to fdiff.File
	chunks   []fdiff.Chunk
}

func newFilePatch(f fileDiff) *filePatch {
	fp := &filePatch{}
	if f.before != nil {
		fp.from = diffFile{path: f.path, hash: plumbing.ComputeHash(plumbing.BlobObject, f.before)}
	}
	if f.after != nil {
		fp.to = diffFile{path: f.path, hash: plumbing.ComputeHash(plumbing.BlobObject, f.after)}
	}
	for _, d := range diff.Do(string(f.before), string(f.after)) {
		op := fdiff.Equal
		switch d.Type {
		case diffmatchpatch.DiffInsert:
			op = fdiff.Add
		case diffmatchpatch.DiffDelete:
			op = fdiff.Delete
		}
		fp.chunks = append(fp.chunks, diffChunk{content: d.Text, op: op})
	}
	return fp
}

func (f *filePatch) IsBinary() bool               { return false }
func (f *filePatch) Files() (from, to fdiff.File) { return f.from, f.to }
func (f *filePatch) Chunks() []fdiff.Chunk        { return f.chunks }
func (d diffFile) Hash() plumbing.Hash            { return d.hash }
func (d diffFile) Mode() filemode.FileMode        { return filemode.Regular }
func (d diffFile) Path() string                   { return d.path }
func (c diffChunk) Content() string               { return c.content }
func (c diffChunk) Type() fdiff.Operation         { return c.op }

type diffFile struct {
	path string
	hash plumbing.Hash
}

type diffChunk struct {
	content string
	op      fdiff.Operation
}
