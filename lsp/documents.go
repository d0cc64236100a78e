package lsp

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

// The open documents: text sync (didOpen, didChange, didClose), the
// snapshot they overlay, and the view a request works on.

// relPath is the slash path of u within the workspace root, if u is a file
// inside it.
func (s *server) relPath(u uri.URI) string {
	p, ok := filePath(u)
	if !ok || s.root == "" {
		return ""
	}
	if resolved, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		p = filepath.Join(resolved, filepath.Base(p))
	}
	rel, err := filepath.Rel(s.root, p)
	if err != nil || rel == "." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || rel == ".." {
		return ""
	}
	rel = filepath.ToSlash(rel)
	if !fs.ValidPath(rel) {
		return ""
	}
	return rel
}

// DidOpen implements protocol.Server.
func (s *server) DidOpen(ctx context.Context, params *protocol.DidOpenTextDocumentParams) error {
	item := params.TextDocument
	s.mu.Lock()
	s.setDocument(&document{uri: item.URI, path: s.relPath(item.URI), version: item.Version, text: item.Text})
	s.mu.Unlock()
	s.markDirty()
	return nil
}

// DidChange implements protocol.Server (full text sync: the last change
// holds the whole text; a ranged change is applied for robustness).
func (s *server) DidChange(ctx context.Context, params *protocol.DidChangeTextDocumentParams) error {
	s.mu.Lock()
	doc, ok := s.docs[params.TextDocument.URI]
	if ok {
		text := applyChanges(doc.text, params.ContentChanges)
		s.setDocument(&document{uri: doc.uri, path: doc.path, version: params.TextDocument.Version, text: text})
	}
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("change to %s, which is not open", params.TextDocument.URI)
	}
	s.markDirty()
	return nil
}

// setDocument makes doc the open document at its URI and, for a file of
// the workspace, the snapshot's content of its path. s.mu is held.
func (s *server) setDocument(doc *document) {
	s.docs[doc.uri] = doc
	if doc.path != "" {
		s.snap = s.snap.with(doc.path, doc.text)
	}
}

// applyChanges applies a didChange's content changes to text in order.
func applyChanges(text string, changes []protocol.TextDocumentContentChangeEvent) string {
	for _, change := range changes {
		switch c := change.(type) {
		case *protocol.TextDocumentContentChangeWholeDocument:
			text = c.Text
		case *protocol.TextDocumentContentChangePartial:
			m := newMapper(text)
			start, end := m.offset(c.Range.Start), m.offset(c.Range.End)
			if end < start {
				start, end = end, start
			}
			text = text[:start] + c.Text + text[end:]
		}
	}
	return text
}

// DidClose implements protocol.Server: the file is read from disk again and
// its diagnostics are cleared.
func (s *server) DidClose(ctx context.Context, params *protocol.DidCloseTextDocumentParams) error {
	s.mu.Lock()
	if doc, ok := s.docs[params.TextDocument.URI]; ok {
		delete(s.docs, doc.uri)
		if doc.path != "" {
			s.snap = s.snap.without(doc.path)
		}
	}
	s.mu.Unlock()
	s.markDirty()
	return nil
}

// DidSave implements protocol.Server; the buffer already holds the text.
func (s *server) DidSave(ctx context.Context, params *protocol.DidSaveTextDocumentParams) error {
	return nil
}

// diskChanged makes a new snapshot after a change on disk (the prompt
// workspace of the old one has cached what it read) and re-diagnoses.
func (s *server) diskChanged() {
	s.mu.Lock()
	if s.snap != nil {
		s.snap = s.snap.without("")
	}
	s.mu.Unlock()
	s.markDirty()
}

// markDirty asks the diagnostics loop to recompute after the debounce.
func (s *server) markDirty() {
	select {
	case s.dirty <- struct{}{}:
	default:
	}
}

// view is what a request works on: the snapshot and open documents at one
// moment. It is never mutated.
type view struct {
	root string
	fsys *overlay
	docs map[uri.URI]*document
}

// currentView captures the session's state.
func (s *server) currentView() view {
	s.mu.Lock()
	defer s.mu.Unlock()
	docs := make(map[uri.URI]*document, len(s.docs))
	for k, v := range s.docs {
		docs[k] = v
	}
	return view{root: s.root, fsys: s.snap, docs: docs}
}

// document returns the open document at u, or nil.
func (v view) document(u uri.URI) *document { return v.docs[u] }
