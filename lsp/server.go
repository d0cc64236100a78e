package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/skills"
	"github.com/quirehq/quire/workspace"
)

// Options configures a language server session.
type Options struct {
	// Logger receives the server's log; nil discards it. It must not write
	// to the protocol stream (stdout when serving on stdio).
	Logger *slog.Logger
	// Debounce is how long the buffers must stay unchanged before
	// diagnostics are computed and published; 0 means 200 ms.
	Debounce time.Duration
	// Root, when set, is the workspace directory, overriding the root the
	// client names in initialize.
	Root string
	// Watch enables watching the workspace on disk (fsnotify) for changes
	// made outside the editor. The `quire lsp` command turns it on.
	Watch bool
	// HomeDir is the user's home directory: its ~/.agents/skills are
	// skills every agent sees, as with `quire prompt`. The package never
	// reads $HOME itself.
	HomeDir string
	// SkillsDir is the managed skills directory (tier 4), as the daemon's
	// --skills-dir, so previews include the same shared skills.
	SkillsDir string
	// CheckAgent lints an agent's other files in the editor's view of the
	// workspace (SKILL.md front matter, shadowed skills); its problems
	// become diagnostics like agent.yaml's. nil means skills.CheckAgent.
	CheckAgent func(fsys fs.FS, agentDir string) []workspace.Problem
	// Version is what initialize reports as serverInfo.version (the
	// `quire version` of the binary); "" means the module version Go
	// recorded, else "devel".
	Version string
}

// ErrExitWithoutShutdown is returned by Serve when the client sent exit (or
// closed the stream) without a shutdown request first; `quire lsp` then exits
// with status 1, as the protocol asks.
var ErrExitWithoutShutdown = errors.New("lsp: exit without shutdown")

// errDropped marks a message the server ignores.
var errDropped = errors.New("dropped")

// defaultDebounce is the quiet time before diagnostics are recomputed.
const defaultDebounce = 200 * time.Millisecond

// closeGrace is how long Serve waits for the stream to close after exit.
const closeGrace = 500 * time.Millisecond

// drainLimit bounds the wait for pending requests to be answered at the end
// of a session (the first assembly loads the tokenizer, which takes a while).
const drainLimit = 5 * time.Second

// drain waits (at most drainLimit) until the reply to every request
// received so far is written. Once the stream is closing or has ended,
// jsonrpc2 refuses to write, so replies must go out before.
func (s *server) drain() {
	select {
	case <-s.replies.allPaid():
	case <-time.After(drainLimit):
	}
}

// Serve runs one language server session over rwc (stdin and stdout for
// `quire lsp`) until the client sends exit, the stream ends or ctx is
// cancelled. It returns nil after shutdown followed by exit, and
// ErrExitWithoutShutdown when the session ended without shutdown.
func Serve(ctx context.Context, rwc io.ReadWriteCloser, opts Options) error {
	return newServer(opts).serve(ctx, rwc)
}

// serve runs the session over rwc; see Serve.
func (s *server) serve(ctx context.Context, rwc io.ReadWriteCloser) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// The framing reader answers malformed frames and goes on; at the end
	// of the input it lets the requests already read be answered first (a
	// client that writes its last requests and closes its end of the pipe
	// still gets its replies).
	stream := newFrameStream(rwc, s.log, s.drain)
	stream.replies = s.replies
	conn := jsonrpc2.NewConn(stream, jsonrpc2.WithCodec(codec{}))
	s.client = protocol.ClientDispatcher(conn)
	conn.Go(ctx, protocol.CancelHandler(s.handler(protocol.ServerHandler(s, nil))))

	go s.diagnoseLoop(ctx)

	select {
	case <-s.exited:
	case <-conn.Done():
	case <-ctx.Done():
	}
	// Answer every request the client sent before exit, then close.
	s.drain()
	cancel()
	// Closing the stream does not interrupt a read blocked on a process's
	// stdin, and clients keep stdin open until the server has exited: wait
	// a moment for a clean close, then end the session anyway.
	closed := make(chan struct{})
	go func() {
		conn.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(closeGrace):
		s.log.Debug("the stream is still open; ending the session without it")
	}
	s.stopWatching()

	s.mu.Lock()
	shutdown := s.shutdown
	s.mu.Unlock()
	if shutdown {
		return nil
	}
	if err := ctx.Err(); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ErrExitWithoutShutdown
}

// server is the state of one session. Its handlers for notifications run in
// wire order on the connection's read loop and only swap snapshots; requests
// run concurrently, each on a snapshot that holds every change the client
// sent before it.
type server struct {
	protocol.UnimplementedServer

	log      *slog.Logger
	debounce time.Duration
	watch    bool
	client   protocol.Client
	dirty    chan struct{} // size one: a burst of changes collapses into one
	exited   chan struct{}
	exitOnce sync.Once
	initDone chan struct{}  // closed when initialize has set the session up
	inflight sync.WaitGroup // requests being answered, shutdown aside
	replies  *replies       // requests whose reply is not written yet

	mu          sync.Mutex
	root        string // absolute workspace directory; "" until initialize
	snap        *overlay
	docs        map[uri.URI]*document // open documents by URI
	published   map[uri.URI][]protocol.Diagnostic
	initialized bool
	shutdown    bool
	lensRefresh bool                // the client re-asks for code lenses when told
	hintRefresh bool                // the same for inlay hints
	hoverKind   protocol.MarkupKind // the markup the client shows hovers in
	watcher     *watcher

	analyses   analyses
	now        func() time.Time // the clock; daily logs depend on the date
	checkAgent func(fsys fs.FS, agentDir string) []workspace.Problem
	home       string
	skillsDir  string
	version    string // serverInfo.version
}

// document is an open editor buffer.
type document struct {
	uri     uri.URI
	path    string // slash path within the root; "" when outside the workspace
	version int32
	text    string
}

func newServer(opts Options) *server {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("component", "lsp")
	d := opts.Debounce
	if d <= 0 {
		d = defaultDebounce
	}
	s := &server{
		log:        log,
		debounce:   d,
		watch:      opts.Watch,
		dirty:      make(chan struct{}, 1),
		exited:     make(chan struct{}),
		initDone:   make(chan struct{}),
		replies:    newReplies(),
		docs:       map[uri.URI]*document{},
		published:  map[uri.URI][]protocol.Diagnostic{},
		analyses:   analyses{cache: prompt.NewTokenizer()},
		now:        time.Now,
		checkAgent: opts.CheckAgent,
		home:       opts.HomeDir,
		skillsDir:  opts.SkillsDir,
		version:    opts.Version,
	}
	if s.version == "" {
		s.version = version()
	}
	if s.checkAgent == nil {
		s.checkAgent = skills.CheckAgent
	}
	if opts.Root != "" {
		s.setRoot(opts.Root)
	}
	return s
}

// handler orders the work: notifications (didOpen, didChange, …) are handled
// inline on the read loop, so they apply in wire order and a request always
// sees every change sent before it; requests are released to run
// concurrently. A failing notification is logged instead of tearing down the
// connection, and a panic in a feature becomes an error reply.
func (s *server) handler(next jsonrpc2.Handler) jsonrpc2.Handler {
	return func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		call := req.IsCall()
		if call {
			s.replies.owe(req.ID())
		}
		if call && req.Method() != protocol.MethodShutdown {
			// Counted on the read loop, so that shutdown, which arrives
			// later on the wire, waits for every request before it.
			s.inflight.Add(1)
			defer s.inflight.Done()
		}
		// Every call is detached, refused ones too: jsonrpc2 v1.0.1
		// recycles the context of a call answered synchronously while the
		// goroutine that protocol.CancelHandler's WithCancel started on
		// it may still read it, which panics. It is detached only after
		// refuse has run on the read loop, so that the messages after an
		// initialize see the session as initialized.
		detach := func() {
			if call {
				jsonrpc2.Async(ctx)
			}
		}
		method := strings.Clone(req.Method())
		if method == protocol.MethodInitialize && call {
			// Checked before the session counts as initialized: an
			// initialize that fails on its params leaves the client free to
			// send a good one, instead of every later request waiting for
			// a session that never starts.
			if err := checkInitialize(req); err != nil {
				detach()
				return nil, err
			}
		}
		refusal := s.refuse(method, call)
		detach()
		if refusal != nil {
			if refusal == errDropped {
				return nil, nil
			}
			return nil, refusal
		}
		if method != protocol.MethodInitialize && method != protocol.MethodExit {
			// initialize runs concurrently like every request; what the
			// client sends after it waits until it has set the session up.
			select {
			case <-s.initDone:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return s.handle(ctx, next, req, method, call)
	}
}

// checkInitialize returns the error answering an initialize whose params
// do not decode, or nil.
func checkInitialize(req *jsonrpc2.Request) error {
	var p protocol.InitializeParams
	if err := protocol.Unmarshal(req.Params(), &p); err != nil {
		return jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("quire lsp: the params of initialize are missing or do not have the shape the method takes: %v", err))
	}
	return nil
}

// handle runs next on a message the session accepts: a panic becomes an
// internal error, params that do not decode an invalid-params error, and
// a failed notification a warning in the log.
func (s *server) handle(ctx context.Context, next jsonrpc2.Handler, req *jsonrpc2.Request, method string, call bool) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("handler panicked", "method", method, "panic", r, "stack", string(debug.Stack()))
			result, err = nil, jsonrpc2.NewError(jsonrpc2.InternalError, fmt.Sprintf("quire lsp: %s failed: %v", method, r))
		}
		if err != nil && !call {
			s.log.Warn("notification failed", "method", method, "err", err)
			result, err = nil, nil
		}
	}()
	result, err = next(ctx, req)
	var rpcErr *jsonrpc2.Error
	if errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc2.ParseError {
		// The message was JSON (the stream checked); its params did
		// not decode into what the method takes.
		err = jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("quire lsp: the params of %s are missing or do not have the shape the method takes: %v", method, err))
	}
	return result, err
}

// refuse answers requests the protocol forbids at this point of the
// session: anything but initialize before it, anything but exit after
// shutdown.
func (s *server) refuse(method string, call bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case method == protocol.MethodExit:
		return nil
	case s.shutdown && call:
		return jsonrpc2.NewError(jsonrpc2.InvalidRequest, "quire lsp: server is shut down")
	case method == protocol.MethodInitialize:
		if s.initialized {
			return jsonrpc2.NewError(jsonrpc2.InvalidRequest, "quire lsp: initialize was already sent")
		}
		s.initialized = true // on the read loop: later messages see it
	case !s.initialized && call:
		return jsonrpc2.NewError(jsonrpc2.ServerNotInitialized, "quire lsp: server not initialized")
	case !s.initialized:
		return errDropped // a notification before initialize is dropped
	}
	return nil
}

// setRoot makes dir the workspace root and resets the snapshot to it.
func (s *server) setRoot(dir string) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		abs = resolved
	}
	s.root = abs
	s.snap = newOverlay(workspace.DirFS(abs))
	s.analyses.mu.Lock()
	s.analyses.rootName = filepath.Base(abs)
	s.analyses.last = nil
	s.analyses.mu.Unlock()
}

// Initialize implements protocol.Server.
func (s *server) Initialize(ctx context.Context, params *protocol.InitializeParams) (*protocol.InitializeResult, error) {
	s.mu.Lock()
	if s.root == "" {
		s.setRoot(rootFromParams(params))
	}
	s.hoverKind = hoverKind(params.Capabilities)
	if ws := params.Capabilities.Workspace; ws != nil {
		s.lensRefresh = ws.CodeLens != nil && ws.CodeLens.RefreshSupport != nil && *ws.CodeLens.RefreshSupport
		s.hintRefresh = ws.InlayHint != nil && ws.InlayHint.RefreshSupport != nil && *ws.InlayHint.RefreshSupport
	}
	root := s.root
	s.mu.Unlock()
	defer close(s.initDone)
	s.log.Info("initialize", "root", root, "client", params.ClientInfo.Name)

	full := protocol.TextDocumentSyncKindFull
	yes := true
	caps := protocol.ServerCapabilities{
		TextDocumentSync: &protocol.TextDocumentSyncOptions{OpenClose: &yes, Change: &full},
		ExecuteCommandProvider: protocol.ExecuteCommandOptions{
			Commands: append([]string(nil), commands...),
		},
		CompletionProvider: &protocol.CompletionOptions{},
		HoverProvider:      protocol.Boolean(true),
		CodeLensProvider:   &protocol.CodeLensOptions{},
		InlayHintProvider:  protocol.Boolean(true),
	}
	if initOptions(params, s.log).outline() {
		caps.DocumentSymbolProvider = protocol.Boolean(true)
		caps.FoldingRangeProvider = protocol.Boolean(true)
	}
	return &protocol.InitializeResult{
		Capabilities: caps,
		ServerInfo:   protocol.ServerInfo{Name: "quire", Version: protocol.NewOptional(s.version)},
	}, nil
}

// InitOptions are the initializationOptions a client may send.
type InitOptions struct {
	// Outline false says the editor shows Markdown outlines and folding
	// itself (VS Code does): the server then offers no document symbols
	// or folding ranges, which would show every heading twice. Absent
	// means true.
	Outline *bool `json:"outline,omitempty"`
}

// outline reports whether the server offers its outline and folding.
func (o InitOptions) outline() bool { return o.Outline == nil || *o.Outline }

// initOptions reads the client's initializationOptions; what does not
// parse is logged and ignored.
func initOptions(params *protocol.InitializeParams, log *slog.Logger) InitOptions {
	var o InitOptions
	raw := []byte(params.InitializationOptions)
	if len(raw) == 0 || string(raw) == "null" {
		return o
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		log.Warn("initializationOptions ignored", "err", err)
		return InitOptions{}
	}
	return o
}

// rootFromParams picks the workspace directory the client names: the first
// workspace folder, else rootUri, else rootPath, else the current directory.
func rootFromParams(params *protocol.InitializeParams) string {
	if folders, ok := params.WorkspaceFolders.Get(); ok {
		for _, f := range folders {
			if dir, ok := filePath(f.URI); ok {
				return dir
			}
		}
	}
	if params.RootURI != nil {
		if dir, ok := filePath(*params.RootURI); ok {
			return dir
		}
	}
	if p, ok := params.RootPath.Get(); ok && p != "" {
		return p
	}
	dir, _ := os.Getwd()
	return dir
}

// Initialized implements protocol.Server: the session is ready, start
// watching the disk.
func (s *server) Initialized(ctx context.Context, params *protocol.InitializedParams) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watch && s.watcher == nil && s.root != "" {
		s.watcher = startWatcher(s.root, s.log, s.diskChanged)
	}
	return nil
}

func (s *server) stopWatching() {
	s.mu.Lock()
	w := s.watcher
	s.watcher = nil
	s.mu.Unlock()
	if w != nil {
		w.close()
	}
}

// Shutdown implements protocol.Server.
func (s *server) Shutdown(ctx context.Context) error {
	// Answer what the client asked before shutdown first.
	done := make(chan struct{})
	go func() {
		s.inflight.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
	s.mu.Lock()
	s.shutdown = true
	s.mu.Unlock()
	s.log.Info("shutdown")
	return nil
}

// Exit implements protocol.Server: it ends Serve. A second exit (Neovim
// sends two) is a no-op.
func (s *server) Exit(ctx context.Context) error {
	s.exitOnce.Do(func() { close(s.exited) })
	return nil
}

// version is the server's version string for serverInfo.
func version() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "devel"
}

// codec marshals LSP payloads with the protocol package's union-aware
// encoder (what protocol.NewServer installs; NewServer itself is not used
// because it runs every notification concurrently, which would reorder
// didChange notifications).
type codec struct{}

func (codec) Marshal(v any) ([]byte, error) {
	switch m := v.(type) {
	case jsonrpc2.RawMessage:
		if m == nil {
			return []byte("null"), nil
		}
		return m, nil
	case *jsonrpc2.RawMessage:
		if m == nil || *m == nil {
			return []byte("null"), nil
		}
		return *m, nil
	}
	return protocol.Marshal(v)
}

func (codec) Unmarshal(data []byte, v any) error {
	if p, ok := v.(*jsonrpc2.RawMessage); ok {
		*p = append(jsonrpc2.RawMessage(nil), data...)
		return nil
	}
	return protocol.Unmarshal(data, v)
}
