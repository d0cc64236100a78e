package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/client"
	"github.com/quirehq/quire/internal/testenv"
)

// alphaFiles is agent alpha's workspace: agent-level memory and two
// users' own memory, each with a marker no other scope holds.
var alphaFiles = map[string]string{
	"agent.yaml":               "name: alpha\ntype: predefined\nwrite_limit_bytes: 400\n",
	"AGENTS.md":                "# Agents\n\nBe brief.\n",
	"SOUL.md":                  "# Soul\n\nCalm and exact. SOUL-ONE\n",
	"TOOLS.md":                 "# Tools\n\nNone.\n",
	"USER.md":                  "# User\n\nShared default.\n",
	"MEMORY.md":                "# Memory\n\nThe wifi password is on the fridge. ALPHA-SECRET\n",
	"memory/2020-01-01.md":     "# 2020-01-01\n\n## 09:00\n\nThe boiler was serviced on the first day of the year.\n",
	"users/alice/MEMORY.md":    "# Memory\n\nAlice drinks green tea every morning. ALICE-MARK\n",
	"users/alice/USER.md":      "# User\n\nAlice, a gardener.\n",
	"users/bob/MEMORY.md":      "# Memory\n\nBob drinks green tea and black coffee. BOB-MARK\n",
	"users/bob/USER.md":        "# User\n\nBob, a baker. BOB-MARK\n",
	"skills/greeting/SKILL.md": "---\nname: greeting\ndescription: Greet a guest warmly at the front desk.\n---\nSay hello. Files in {baseDir}.\n",
}

// betaFiles is another agent's workspace.
var betaFiles = map[string]string{
	"agent.yaml": "name: beta\n",
	"SOUL.md":    "# Soul\n\nBeta. BETA-SECRET\n",
	"MEMORY.md":  "# Memory\n\nThe wifi password is BETA-SECRET.\n",
}

type testDaemon struct {
	d      *daemon.Daemon
	c      *client.Client
	socket string
	remote string
	stop   func() time.Duration
}

// startDaemon runs a daemon hosting repositories until the test ends;
// stop stops it and says how long that took.
func startDaemon(t testing.TB, opts daemon.Options) *testDaemon {
	t.Helper()
	tmp, err := os.MkdirTemp("", "qm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	opts.ReposDir = filepath.Join(tmp, "repos")
	opts.AllowCreate = true // the tests create repositories by pushing
	opts.GitListen = "127.0.0.1:0"
	opts.Socket = filepath.Join(tmp, "q.sock")
	opts.CacheDir = filepath.Join(tmp, "cache")
	if testing.Verbose() {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	ctx, cancel := context.WithCancel(context.Background())
	d, err := daemon.New(ctx, opts)
	if err != nil {
		cancel()
		t.Fatalf("daemon.New: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	select {
	case <-d.Ready():
	case err := <-done:
		cancel()
		t.Fatalf("daemon.Run: %v", err)
	}
	td := &testDaemon{d: d, c: &client.Client{Socket: opts.Socket}, socket: opts.Socket, remote: "http://" + d.GitAddr()}
	var took time.Duration
	stopped := false
	td.stop = func() time.Duration {
		if stopped {
			return took
		}
		stopped = true
		start := time.Now()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("daemon.Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("daemon did not stop within 30 s")
		}
		took = time.Since(start)
		return took
	}
	t.Cleanup(func() { td.stop() })
	return td
}

// deploy pushes files as repository name and waits until its agent's
// memory is indexed.
func (td *testDaemon) deploy(t testing.TB, name, agent string, files map[string]string) string {
	t.Helper()
	dir := testenv.NewWorkTree(t, files, "workspace")
	testenv.Git(t, dir, "push", "-q", td.remote+"/"+name+".git", "main")
	td.waitIndexed(t, agent)
	return dir
}

func (td *testDaemon) waitIndexed(t testing.TB, agent string) {
	t.Helper()
	waitFor(t, "agent "+agent+" to be indexed", func() bool {
		for _, a := range td.d.Status(context.Background()).Agents {
			if a.Name == agent && a.Deployed != "" && a.Indexed == a.Deployed {
				return true
			}
		}
		return false
	})
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// socketHTTP is an HTTP client that dials the unix socket.
func socketHTTP(socket string) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socket)
	}}}
}

// streamSignal is a transport that closes opened once a GET of a path
// ending in path is answered 200: a stream the server holds open (MCP's
// standalone stream, the local API's events) has started then.
type streamSignal struct {
	base   http.RoundTripper
	path   string
	once   sync.Once
	opened chan struct{}
}

func (s *streamSignal) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.base.RoundTrip(r)
	if err == nil && r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, s.path) && resp.StatusCode == http.StatusOK {
		s.once.Do(func() { close(s.opened) })
	}
	return resp, err
}

// signalStream returns hc with a transport that closes the channel once
// a stream at path opened (see streamSignal).
func signalStream(hc *http.Client, path string) (*http.Client, <-chan struct{}) {
	s := &streamSignal{base: hc.Transport, path: path, opened: make(chan struct{})}
	return &http.Client{Transport: s}, s.opened
}

// waitOpened waits (10 s at most) for a stream signalStream watches.
func waitOpened(t testing.TB, what string, opened <-chan struct{}) {
	t.Helper()
	select {
	case <-opened:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not open within 10 s", what)
	}
}

// mcpRequest is a POST of a JSON-RPC message to url in session ("" for
// none) with the headers of streamable HTTP, as a client without the SDK
// sends it.
func mcpRequest(url, session string, body []byte) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	return req
}

// bearer adds a token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// connect opens an MCP session with the official Go SDK client.
func connect(t testing.TB, hc *http.Client, endpoint string, opts *sdk.ClientOptions) (*sdk.ClientSession, error) {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "quire-test", Version: "0"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func mustConnect(t testing.TB, hc *http.Client, endpoint string, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	cs, err := connect(t, hc, endpoint, opts)
	if err != nil {
		t.Fatalf("connect %s: %v", endpoint, err)
	}
	return cs
}

// call calls a tool and returns its text and whether it is an error.
func call(t testing.TB, cs *sdk.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	var sb strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return sb.String(), res.IsError
}

// callOK calls a tool that must succeed and decodes its JSON answer.
func callOK(t testing.TB, cs *sdk.ClientSession, name string, args map[string]any, out any) string {
	t.Helper()
	text, isErr := call(t, cs, name, args)
	if isErr {
		t.Fatalf("%s %v: tool error %s", name, args, text)
	}
	if out != nil {
		if err := json.Unmarshal([]byte(text), out); err != nil {
			t.Fatalf("%s: decode %q: %v", name, text, err)
		}
	}
	return text
}

// callErr calls a tool that must fail and returns its API error.
func callErr(t testing.TB, cs *sdk.ClientSession, name string, args map[string]any) api.Error {
	t.Helper()
	text, isErr := call(t, cs, name, args)
	if !isErr {
		t.Fatalf("%s %v: succeeded with %s; want a tool error", name, args, text)
	}
	var body api.ErrorBody
	if err := json.Unmarshal([]byte(text), &body); err != nil || body.Error.Code == "" {
		t.Fatalf("%s: error text %q is not the API's error body", name, text)
	}
	return body.Error
}
