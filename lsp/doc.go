// Package lsp is Quire's language server (`quire lsp`): it keeps immutable
// snapshots of the workspace on disk overlaid with the editor's unsaved
// buffers and answers diagnostics, hover, code lenses and prompt previews by
// calling the same prompt and skills code the daemon uses.
package lsp
