package daemon

import (
	"bytes"
	"hash/maphash"
	"io/fs"
	"sync"
)

// maxCheckedTexts bounds the texts a source remembers as checked.
const maxCheckedTexts = 1 << 14

// checkedTexts remembers, by path, the last content of a file that passed
// the checks of a write (checked): its length and hash. A write whose
// content extends such a text byte for byte (a memory append) has only
// what it adds scanned by the rule on content: the rest passed it. The
// zero value is ready to use.
type checkedTexts struct {
	mu    sync.Mutex
	seed  maphash.Seed
	texts map[string]checkedText
}

type checkedText struct {
	n   int
	sum uint64
}

// fingerprint is content's length and hash, as checkedTexts keeps it.
type fingerprint = checkedText

// tail returns the part of content at p that the content rules must
// still scan: from the start of the line where a text that passed
// them, and that content begins with, ends; ok is false when content
// extends no such text. fp is content's fingerprint, for passed.
func (c *checkedTexts) tail(p string, content []byte) (rest []byte, fp fingerprint, ok bool) {
	c.mu.Lock()
	if c.seed == (maphash.Seed{}) {
		c.seed = maphash.MakeSeed()
	}
	t, known := c.texts[p]
	seed := c.seed
	c.mu.Unlock()
	var h maphash.Hash
	h.SetSeed(seed)
	known = known && t.n <= len(content)
	if known {
		h.Write(content[:t.n])
		known = h.Sum64() == t.sum
		h.Write(content[t.n:]) // the hash of content, written in two parts
	} else {
		h.Write(content)
	}
	fp = fingerprint{n: len(content), sum: h.Sum64()}
	if !known {
		return nil, fp, false
	}
	// A text that passed is whole UTF-8 and printable: the content
	// passes as its rest from the join, its last line, does.
	from := bytes.LastIndexByte(content[:t.n], '\n') + 1
	return content[from:], fp, true
}

// passed remembers the content at p whose fingerprint tail returned as
// having passed the checks.
func (c *checkedTexts) passed(p string, fp fingerprint) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.texts == nil || len(c.texts) >= maxCheckedTexts {
		c.texts = make(map[string]checkedText)
	}
	c.texts[p] = fp
}

// tailFS is a write's tree as the file rules read it when only the
// tails of some files' contents need the rule on content: their reads
// give the tails, everything else (sizes, listings) is the tree's.
type tailFS struct {
	*pendingFS
	tails map[string][]byte
}

// ReadFile implements fs.ReadFileFS.
func (t *tailFS) ReadFile(name string) ([]byte, error) {
	if b, ok := t.tails[name]; ok {
		return b, nil
	}
	return t.pendingFS.ReadFile(name)
}

var _ fs.ReadFileFS = (*tailFS)(nil)
