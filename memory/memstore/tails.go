package memstore

import (
	"strings"

	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/bm25"
)

// tails keeps, for one agent, the text of each recently changed
// document and the text analysis (bm25.Doc) of the last chunk it was
// given. An append to a daily log grows the log's last chunk: the run
// that follows chunks only that chunk and what was appended
// (memory.Document.ChunksExtending), removes that chunk, which then
// costs no analysis of its text, and adds the grown one, which costs
// the analysis of what was appended only (bm25.Dynamic.Extend). The
// text costs no memory of its own: the document's chunks hold it. Each Doc is one of text's, kept valid across
// its Updates (bm25.Dynamic.Resolved); a text index made anew (a
// compaction, a refused change, a Load) leaves every one out of date.
// An entry is only ever the document's current version: a run that
// changes the document replaces or drops it.
type tails struct {
	text *bm25.Dynamic
	docs map[docKey]tailDoc
	run  uint64 // the number of the last run
}

// tailDoc is a document's text and hash as indexed and, when hasDoc,
// its last chunk as indexed and the Doc its text was added with.
type tailDoc struct {
	text, hash string
	chunk      memory.Chunk
	doc        bm25.Doc
	hasDoc     bool
	run        uint64 // the run that added it
}

// maxTails bounds the documents an agent's tails hold: those appended
// to recently (a Doc is about 8 bytes a distinct term of its chunk).
const maxTails = 2048

// removal is the Doc of old's chunk c, removed: the one kept when it
// was added, or an analysis of its text.
func (tl *tails) removal(text *bm25.Dynamic, c memory.Chunk) bm25.Doc {
	if tl != nil && tl.text == text {
		if e, ok := tl.docs[docKey{c.User, c.Path}]; ok && e.hasDoc && e.chunk == c {
			return e.doc
		}
	}
	return text.Analyze(memory.IndexText(c))
}

// extension is the Doc of chunk c when it extends prev, a chunk removed
// with Doc doc: the same lines of the same document and more, after a
// line break. It reports false when c does not extend prev.
func extension(text *bm25.Dynamic, c, prev memory.Chunk, doc bm25.Doc) (bm25.Doc, bool) {
	if c.StartLine != prev.StartLine || c.Context != prev.Context || c.Path != prev.Path || c.User != prev.User ||
		len(c.Text) <= len(prev.Text) || c.Text[len(prev.Text)] != '\n' || !strings.HasPrefix(c.Text, prev.Text) {
		return bm25.Doc{}, false
	}
	// IndexText(c) is IndexText(prev), a line break and the rest.
	return text.Extend(doc, c.Text[len(prev.Text)+1:]), true
}

// prevText is document k's text when the index holds it with hash h.
func (tl *tails) prevText(k docKey, h string) (string, bool) {
	e, ok := tl.docs[k]
	if !ok || e.hash != h {
		return "", false
	}
	return e.text, true
}

// kept records, after text's Update that added them, the changed
// documents (edits) and the Doc of the last fresh chunk of each one
// (fresh[i] added as added[i]), dropping the entries of those gone,
// within maxTails entries.
func (tl *tails) kept(text *bm25.Dynamic, edits []docEdit, fresh []memory.Chunk, added []bm25.Doc) {
	if tl.text != text {
		tl.text, tl.docs = text, map[docKey]tailDoc{}
	}
	tl.run++
	for _, e := range edits {
		delete(tl.docs, e.key)
	}
	for _, e := range edits {
		if e.gone || !tl.room() {
			continue
		}
		tl.docs[e.key] = tailDoc{text: e.text, hash: e.hash, run: tl.run}
	}
	for i, c := range fresh {
		if i+1 < len(fresh) && fresh[i+1].User == c.User && fresh[i+1].Path == c.Path {
			continue // not the document's last fresh chunk
		}
		k := docKey{c.User, c.Path}
		e, ok := tl.docs[k]
		if !ok {
			continue
		}
		if e.doc, e.hasDoc = text.Resolved(added[i]); e.hasDoc {
			e.chunk = c
			tl.docs[k] = e
		}
	}
}

// renumber makes the Docs, of tl.text, those of c, its compaction,
// dropping any c cannot number (none: c holds the same documents).
func (tl *tails) renumber(c *bm25.Dynamic) {
	for k, e := range tl.docs {
		if !e.hasDoc {
			continue
		}
		if e.doc, e.hasDoc = c.Renumbered(tl.text, e.doc); !e.hasDoc {
			e.chunk = memory.Chunk{}
		}
		tl.docs[k] = e
	}
	tl.text = c
}

// room reports whether an entry may be added, dropping those of earlier
// runs when there are maxTails.
func (tl *tails) room() bool {
	if len(tl.docs) >= maxTails {
		tl.evict()
	}
	return len(tl.docs) < maxTails
}

// evict drops the entries earlier runs made.
func (tl *tails) evict() {
	for k, e := range tl.docs {
		if e.run != tl.run {
			delete(tl.docs, k)
		}
	}
}
