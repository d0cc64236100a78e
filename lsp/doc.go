// Package lsp is Quire's language server (`quire lsp`): it keeps immutable
// snapshots of the workspace on disk overlaid with the editor's unsaved
// buffers and answers diagnostics, hover, code lenses and prompt previews by
// calling the same prompt and skills code the daemon uses.
//
// Layout: server.go is the protocol plumbing (lifecycle, ordering, text
// sync), overlay.go the snapshot fs.FS, position.go the only place that
// converts byte offsets to UTF-16 positions, diagnostics.go the debounced
// publisher, budget.go, insight.go and preview.go the features built on
// prompt.Workspace (analysis.go), markdown.go and completion.go the
// features that need no workspace, watch.go the policy of its file
// watcher (internal/fswatch).
//
// Built on go.lsp.dev/protocol v1.0.1 and go.lsp.dev/jsonrpc2 v1.0.1, with
// these deliberate departures from protocol.NewServer:
//   - notifications run inline on the read loop, in wire order (NewServer
//     runs everything concurrently, which can reorder didChange); every
//     request is detached with jsonrpc2.Async and sees the snapshot of the
//     notifications before it;
//   - every request is detached, even one refused at once: a request
//     answered synchronously has its pooled context recycled while the
//     goroutine protocol.CancelHandler's context.WithCancel started may
//     still read it (a panic in jsonrpc2 v1.0.1);
//   - a failing notification is logged, never returned (jsonrpc2 would tear
//     the connection down);
//   - shutdown answers pending requests first, and Serve drains replies
//     before closing, because jsonrpc2 refuses to write once the stream is
//     closing or has ended; closing does not interrupt a read blocked on
//     stdin, so Serve waits for it only briefly.
package lsp
