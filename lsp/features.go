package lsp

import (
	"context"

	"go.lsp.dev/protocol"
)

// DocumentSymbol implements protocol.Server: the outline of a Markdown
// document from its headings.
func (s *server) DocumentSymbol(ctx context.Context, params *protocol.DocumentSymbolParams) (protocol.DocumentSymbolResult, error) {
	doc := s.currentView().document(params.TextDocument.URI)
	if doc == nil || !isMarkdown(doc.uri) {
		return protocol.DocumentSymbolSlice{}, nil
	}
	return protocol.DocumentSymbolSlice(documentSymbols(doc.text)), nil
}

// FoldingRanges implements protocol.Server: front matter and sections.
func (s *server) FoldingRanges(ctx context.Context, params *protocol.FoldingRangeParams) ([]protocol.FoldingRange, error) {
	doc := s.currentView().document(params.TextDocument.URI)
	if doc == nil || !isMarkdown(doc.uri) {
		return []protocol.FoldingRange{}, nil
	}
	return foldingRanges(doc.text), nil
}

// Completion implements protocol.Server: agent.yaml keys and SKILL.md
// front-matter keys.
func (s *server) Completion(ctx context.Context, params *protocol.CompletionParams) (protocol.CompletionResult, error) {
	doc := s.currentView().document(params.TextDocument.URI)
	if doc == nil {
		return protocol.CompletionItemSlice{}, nil
	}
	return protocol.CompletionItemSlice(completion(string(doc.uri), doc.text, params.Position)), nil
}

// isMarkdown reports whether a document is Markdown by its name.
func isMarkdown(u interface{ String() string }) bool {
	n := u.String()
	return len(n) > 3 && (n[len(n)-3:] == ".md" || n[len(n)-3:] == ".MD")
}
