package lsp

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

// testClient is the editor side of an in-process session: it records the
// diagnostics the server publishes, in order.
type testClient struct {
	protocol.UnimplementedClient
	diags     chan *protocol.PublishDiagnosticsParams
	refreshes chan string
}

// CodeLensRefresh and InlayHintRefresh record that the server asked.
func (c *testClient) CodeLensRefresh(ctx context.Context) error {
	c.refresh("codeLens")
	return nil
}

func (c *testClient) InlayHintRefresh(ctx context.Context) error {
	c.refresh("inlayHint")
	return nil
}

func (c *testClient) refresh(what string) {
	select {
	case c.refreshes <- what:
	default:
	}
}

func (c *testClient) PublishDiagnostics(ctx context.Context, p *protocol.PublishDiagnosticsParams) error {
	clone, err := protocol.Clone(p)
	if err != nil {
		return err
	}
	c.diags <- clone
	return nil
}

// session is a running server with a connected client.
type session struct {
	t      *testing.T
	root   string
	server protocol.Server
	client *testClient
	srv    *server
	done   chan error
	init   *protocol.InitializeResult // what initialize answered
}

// serverState is the server end of the session, for tests that compute
// what it would publish.
func (s *session) serverState(t *testing.T) *server { return s.srv }

// startSession serves a language server over an in-memory pipe, rooted at
// root, and initializes it.
func startSession(t *testing.T, root string) *session {
	t.Helper()
	return startSessionWith(t, root, Options{})
}

// startSessionWith is startSession with options (the debounce and logger
// are the test's).
func startSessionWith(t *testing.T, root string, opts Options) *session {
	t.Helper()
	return startSessionCaps(t, root, opts, protocol.ClientCapabilities{})
}

// startSessionCaps is startSessionWith for a client with capabilities.
func startSessionCaps(t *testing.T, root string, opts Options, caps protocol.ClientCapabilities) *session {
	t.Helper()
	sc, cc := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	s := &session{t: t, root: root, client: &testClient{diags: make(chan *protocol.PublishDiagnosticsParams, 100), refreshes: make(chan string, 10)}, done: make(chan error, 1)}
	opts.Debounce, opts.Logger = 5*time.Millisecond, testLogger()
	s.srv = newServer(opts)
	go func() { s.done <- s.srv.serve(ctx, sc) }()
	conn := jsonrpc2.NewConn(jsonrpc2.NewStream(cc), jsonrpc2.WithCodec(codec{}))
	conn.Go(ctx, protocol.ClientHandler(s.client, jsonrpc2.MethodNotFoundHandler))
	s.server = protocol.ServerDispatcher(conn)
	t.Cleanup(func() {
		cancel()
		conn.Close()
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
			t.Error("server did not stop")
		}
	})
	rootURI := uri.File(root)
	res, err := s.server.Initialize(ctx, &protocol.InitializeParams{RootURI: &rootURI, Capabilities: caps})
	s.init = res
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if err := s.server.Initialized(ctx, &protocol.InitializedParams{}); err != nil {
		t.Fatalf("initialized: %v", err)
	}
	return s
}

func (s *session) uri(name string) uri.URI { return uri.File(filepath.Join(s.root, name)) }

func (s *session) open(name, text string) {
	s.t.Helper()
	err := s.server.DidOpen(context.Background(), &protocol.DidOpenTextDocumentParams{TextDocument: protocol.TextDocumentItem{
		URI: s.uri(name), LanguageID: "markdown", Version: 1, Text: text,
	}})
	if err != nil {
		s.t.Fatalf("didOpen %s: %v", name, err)
	}
}

func (s *session) change(name string, version int32, text string) {
	s.t.Helper()
	err := s.server.DidChange(context.Background(), &protocol.DidChangeTextDocumentParams{
		TextDocument:   protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: s.uri(name)}, Version: version},
		ContentChanges: []protocol.TextDocumentContentChangeEvent{&protocol.TextDocumentContentChangeWholeDocument{Text: text}},
	})
	if err != nil {
		s.t.Fatalf("didChange %s: %v", name, err)
	}
}

// diagnostics waits for the next publication for name.
func (s *session) diagnostics(name string) []protocol.Diagnostic {
	s.t.Helper()
	want := s.uri(name)
	deadline := time.After(5 * time.Second)
	for {
		select {
		case p := <-s.client.diags:
			if p.URI == want {
				return p.Diagnostics
			}
		case <-deadline:
			s.t.Fatalf("no diagnostics published for %s", name)
			return nil
		}
	}
}

// quiet asserts that nothing is published for a while.
func (s *session) quiet() {
	s.t.Helper()
	select {
	case p := <-s.client.diags:
		s.t.Errorf("unexpected publication for %s: %d diagnostics", p.URI, len(p.Diagnostics))
	case <-time.After(100 * time.Millisecond):
	}
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	return writeFilesTB(t, files)
}

// writeFilesTB is writeFiles for tests and fuzz targets.
func writeFilesTB(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestLifecycleShutdownThenExit(t *testing.T) {
	s := startSession(t, t.TempDir())
	ctx := context.Background()
	if err := s.server.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if _, err := s.server.DocumentSymbol(ctx, &protocol.DocumentSymbolParams{TextDocument: protocol.TextDocumentIdentifier{URI: s.uri("SOUL.md")}}); err == nil {
		t.Error("a request after shutdown succeeded")
	}
	if err := s.server.Exit(ctx); err != nil {
		t.Fatalf("exit: %v", err)
	}
	_ = s.server.Exit(ctx) // Neovim sends exit twice; the second must not hurt
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("Serve after shutdown and exit = %v, want nil", err)
		}
		s.done <- err
	case <-time.After(5 * time.Second):
		t.Fatal("exit did not end Serve")
	}
}

func TestLifecycleExitWithoutShutdown(t *testing.T) {
	s := startSession(t, t.TempDir())
	if err := s.server.Exit(context.Background()); err != nil {
		t.Fatalf("exit: %v", err)
	}
	select {
	case err := <-s.done:
		if !errors.Is(err, ErrExitWithoutShutdown) {
			t.Errorf("Serve after exit without shutdown = %v, want ErrExitWithoutShutdown", err)
		}
		s.done <- err
	case <-time.After(5 * time.Second):
		t.Fatal("exit did not end Serve")
	}
}

func TestRequestBeforeInitializeIsRefused(t *testing.T) {
	sc, cc := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, sc, Options{}) }()
	conn := jsonrpc2.NewConn(jsonrpc2.NewStream(cc), jsonrpc2.WithCodec(codec{}))
	conn.Go(ctx, jsonrpc2.MethodNotFoundHandler)
	server := protocol.ServerDispatcher(conn)
	_, err := server.Hover(ctx, &protocol.HoverParams{})
	var rpcErr *jsonrpc2.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc2.ServerNotInitialized {
		t.Errorf("hover before initialize: %v, want ServerNotInitialized", err)
	}
	conn.Close()
	if err := <-done; !errors.Is(err, ErrExitWithoutShutdown) {
		t.Errorf("Serve after the stream closed = %v", err)
	}
}

func TestNonFileURIsDoNotCrash(t *testing.T) {
	s := startSession(t, t.TempDir())
	ctx := context.Background()
	for _, u := range []uri.URI{"untitled:Untitled-1", "git:/x/SOUL.md?ref=HEAD", "vscode-notebook-cell:/a#b", "file:///elsewhere/SOUL.md"} {
		err := s.server.DidOpen(ctx, &protocol.DidOpenTextDocumentParams{TextDocument: protocol.TextDocumentItem{URI: u, LanguageID: "markdown", Version: 1, Text: "# Title\n\xff"}})
		if err != nil {
			t.Fatalf("didOpen %s: %v", u, err)
		}
		if err := s.server.DidChange(ctx, &protocol.DidChangeTextDocumentParams{
			TextDocument:   protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: u}, Version: 2},
			ContentChanges: []protocol.TextDocumentContentChangeEvent{&protocol.TextDocumentContentChangeWholeDocument{Text: "# New"}},
		}); err != nil {
			t.Fatalf("didChange %s: %v", u, err)
		}
		if _, err := s.server.DocumentSymbol(ctx, &protocol.DocumentSymbolParams{TextDocument: protocol.TextDocumentIdentifier{URI: u}}); err != nil {
			t.Errorf("documentSymbol %s: %v", u, err)
		}
		if _, err := s.server.ExecuteCommand(ctx, &protocol.ExecuteCommandParams{Command: CommandPreviewPrompt, Arguments: []protocol.LSPAny{[]byte(`{"uri":"` + string(u) + `"}`)}}); err == nil {
			t.Logf("preview for %s succeeded", u)
		}
	}
	// The session still works.
	if err := os.WriteFile(filepath.Join(s.root, "SOUL.md"), []byte("bad \xff byte"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.open("SOUL.md", "bad \uFFFD byte")
	if d := s.diagnostics("SOUL.md"); len(d) != 1 {
		t.Errorf("after non-file URIs: %d diagnostics, want 1", len(d))
	}
}

func TestInvalidUTF8DiagnosticAndClear(t *testing.T) {
	root := writeFiles(t, map[string]string{"SOUL.md": "ok 😀 \xff\xfe tail\n"})
	s := startSession(t, root)
	// Editors show the bad bytes as U+FFFD; JSON cannot carry them.
	s.open("SOUL.md", "ok 😀 \uFFFD\uFFFD tail\n")
	diags := s.diagnostics("SOUL.md")
	if len(diags) != 1 {
		t.Fatalf("got %d diagnostics, want 1: %+v", len(diags), diags)
	}
	want := protocol.Range{Start: protocol.Position{Line: 0, Character: 6}, End: protocol.Position{Line: 0, Character: 8}}
	if diags[0].Range != want || diags[0].Severity != protocol.DiagnosticSeverityError {
		t.Errorf("diagnostic %+v, want error at %+v", diags[0], want)
	}
	// Saving the buffer (as UTF-8) fixes the file.
	if err := os.WriteFile(filepath.Join(root, "SOUL.md"), []byte("ok now\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.change("SOUL.md", 2, "ok now\n")
	if diags := s.diagnostics("SOUL.md"); diags == nil || len(diags) != 0 {
		t.Errorf("after the fix: %#v, want an empty list", diags)
	}
	s.change("SOUL.md", 3, "still ok\n")
	s.quiet() // unchanged diagnostics are not published again
}

// An empty diagnostics list goes over the wire as [], never null.
func TestClearedDiagnosticsAreAnEmptyArray(t *testing.T) {
	b, err := codec{}.Marshal(&protocol.PublishDiagnosticsParams{URI: "file:///x/SOUL.md", Diagnostics: []protocol.Diagnostic{}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"diagnostics":[]`) {
		t.Errorf("marshalled %s, want \"diagnostics\":[]", b)
	}
}

// testLogger discards the server's log unless QUIRE_LSP_TEST_LOG is set.
func testLogger() *slog.Logger {
	if os.Getenv("QUIRE_LSP_TEST_LOG") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// Ranged changes (a client that ignores full sync) apply at UTF-16
// positions.
func TestRangedChange(t *testing.T) {
	s := startSession(t, t.TempDir())
	s.open("SOUL.md", "# Soul 😀\nkind\n")
	err := s.server.DidChange(context.Background(), &protocol.DidChangeTextDocumentParams{
		TextDocument: protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: s.uri("SOUL.md")}, Version: 2},
		ContentChanges: []protocol.TextDocumentContentChangeEvent{&protocol.TextDocumentContentChangePartial{
			Range: protocol.Range{Start: protocol.Position{Line: 0, Character: 7}, End: protocol.Position{Line: 0, Character: 9}},
			Text:  "🎉 and more",
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// A notification is not answered, but a request after it sees it
	// applied: its reply says so.
	if _, err := s.server.DocumentSymbol(context.Background(), &protocol.DocumentSymbolParams{TextDocument: protocol.TextDocumentIdentifier{URI: s.uri("SOUL.md")}}); err != nil {
		t.Fatal(err)
	}
	doc := s.srv.currentView().document(s.uri("SOUL.md"))
	if doc == nil || doc.text != "# Soul 🎉 and more\nkind\n" || doc.version != 2 {
		t.Errorf("after the change: %+v", doc)
	}
}

// Malformed messages are answered or logged; the session goes on.
func TestMalformedMessagesDoNotEndTheSession(t *testing.T) {
	sc, cc := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, sc, Options{Logger: testLogger()}) }()
	conn := jsonrpc2.NewConn(jsonrpc2.NewStream(cc), jsonrpc2.WithCodec(codec{}))
	conn.Go(ctx, jsonrpc2.MethodNotFoundHandler)
	defer conn.Close()
	server := protocol.ServerDispatcher(conn)
	if _, err := server.Initialize(ctx, &protocol.InitializeParams{}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []struct{ method, params string }{
		{"textDocument/didOpen", `{"textDocument": 5}`},
		{"textDocument/didChange", `{"textDocument": {"uri": "file:///nowhere.md", "version": 1}, "contentChanges": [{"text": "x"}]}`},
		{"textDocument/didClose", `[]`},
		{"$/unknownNotification", `{}`},
	} {
		if err := conn.Notify(ctx, n.method, jsonrpc2.RawMessage(n.params)); err != nil {
			t.Fatalf("notify %s: %v", n.method, err)
		}
	}
	var res jsonrpc2.RawMessage
	if _, err := conn.Call(ctx, "textDocument/hover", jsonrpc2.RawMessage(`{"textDocument": "x"}`), &res); err == nil {
		t.Error("a malformed hover succeeded")
	}
	if _, err := conn.Call(ctx, "quire/unknown", jsonrpc2.RawMessage(`{}`), &res); err == nil {
		t.Error("an unknown request succeeded")
	}
	// Still alive and answering.
	if _, err := server.DocumentSymbol(ctx, &protocol.DocumentSymbolParams{TextDocument: protocol.TextDocumentIdentifier{URI: "file:///x.md"}}); err != nil {
		t.Errorf("after malformed messages: %v", err)
	}
	if err := server.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := server.Exit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve = %v", err)
	}
}
