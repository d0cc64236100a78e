package daemon

import (
	"hash/maphash"
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

// checked returns how many bytes at the start of content, the content
// of p a write makes, are a text that passed the checks
// (workspace.CheckPaths scans only the rest), and content's fingerprint,
// for passed.
func (c *checkedTexts) checked(p string, content []byte) (n int, fp fingerprint) {
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
		return 0, fp
	}
	return t.n, fp
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
