package main

import (
	"bytes"
	"context"
	"io"
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
	"github.com/quirehq/quire/prompt"
)

// copyDir copies the directory src to a new temporary directory.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// syncBuffer is a bytes.Buffer safe for a command's stderr.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startMCP runs `quire mcp args…` in process on pipes and connects the
// official Go SDK client to it.
func startMCP(t *testing.T, getenv func(string) string, args ...string) *sdk.ClientSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	stderr := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		code := run(ctx, append([]string{"mcp"}, args...), &env{stdin: inR, stdout: outW, stderr: stderr, getenv: getenv})
		outW.Close()
		done <- code
	}()
	c := sdk.NewClient(&sdk.Implementation{Name: "quire-test", Version: "0"}, nil)
	cctx, ccancel := context.WithTimeout(ctx, 60*time.Second)
	defer ccancel()
	cs, err := c.Connect(cctx, &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		cancel()
		t.Fatalf("connect to quire mcp %v: %v\nstderr: %s", args, err, stderr.String())
	}
	t.Cleanup(func() {
		cs.Close()
		inW.Close()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("quire mcp exited %d after the client closed stdin; stderr: %s", code, stderr.String())
			}
		case <-time.After(30 * time.Second):
			t.Error("quire mcp did not exit within 30 s of stdin closing")
		}
		cancel()
	})
	return cs
}

func mcpPrompt(t *testing.T, cs *sdk.ClientSession, args map[string]string) string {
	t.Helper()
	res, err := cs.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: "system_prompt", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	return res.Messages[0].Content.(*sdk.TextContent).Text
}

func cliPrompt(t *testing.T, getenv func(string) string, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := run(context.Background(), append([]string{"prompt"}, args...), &env{stdout: &out, stderr: &errOut, getenv: getenv}); code != 0 {
		t.Fatalf("quire prompt %v: exit %d: %s", args, code, errOut.String())
	}
	return out.String()
}

func testEnv(t *testing.T) func(string) string {
	home, run := t.TempDir(), t.TempDir()
	vars := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "XDG_CACHE_HOME": filepath.Join(home, ".cache"), "XDG_RUNTIME_DIR": run}
	return func(k string) string { return vars[k] }
}

// TestMCPDirPromptEqualsCLI: `quire mcp --dir` serves the prompt that
// `quire prompt --dir` prints, byte for byte, and its tools work without
// a daemon.
func TestMCPDirPromptEqualsCLI(t *testing.T) {
	dir := copyDir(t, "../../examples")
	getenv := testEnv(t)
	cs := startMCP(t, getenv, "--dir", dir, "--agent", "studybuddy", "--user", "alice", "--cache-dir", t.TempDir())
	for _, c := range []struct{ session, channel string }{{"", ""}, {"main", "group"}, {"cron", ""}} {
		got := mcpPrompt(t, cs, map[string]string{"session": c.session, "channel": c.channel})
		args := []string{"--dir", dir, "--agent", "studybuddy", "--user", "alice"}
		if c.session != "" {
			args = append(args, "--session", c.session)
		}
		if c.channel != "" {
			args = append(args, "--channel", c.channel)
		}
		if want := cliPrompt(t, getenv, args...); got != want {
			t.Errorf("%+v: quire mcp --dir prompt (%d bytes) differs from quire prompt (%d bytes)", c, len(got), len(want))
		}
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "memory_search", Arguments: map[string]any{"query": "spacing reviews"}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, `"hits":[{`) {
		t.Fatalf("memory_search over quire mcp --dir: %+v, %v", res, err)
	}
}

// TestMCPDaemonPromptEqualsAPIAndCLI: `quire mcp` talking to a running
// daemon serves the API's prompt, which is `quire prompt`'s.
func TestMCPDaemonPromptEqualsAPIAndCLI(t *testing.T) {
	dir := copyDir(t, "../../examples")
	getenv := testEnv(t)
	sock := filepath.Join(getenv("XDG_RUNTIME_DIR"), "q.sock")
	ctx, cancel := context.WithCancel(context.Background())
	d, err := daemon.New(ctx, daemon.Options{Dir: dir, Socket: sock, CacheDir: t.TempDir(), HomeDir: getenv("HOME")})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("daemon: %v", err)
		}
	})
	<-d.Ready()
	cs := startMCP(t, getenv, "--socket", sock, "--agent", "concierge", "--user", "ines.carvalho")
	got := mcpPrompt(t, cs, nil)
	c := &client.Client{Socket: sock}
	viaAPI, err := c.Prompt(ctx, "concierge", api.PromptRequest{User: "ines.carvalho", Session: prompt.SessionMain})
	if err != nil {
		t.Fatal(err)
	}
	cli := cliPrompt(t, getenv, "--dir", dir, "--agent", "concierge", "--user", "ines.carvalho")
	if got != viaAPI.Prompt || got != cli {
		t.Errorf("prompts differ: MCP %d bytes, API %d bytes, CLI %d bytes", len(got), len(viaAPI.Prompt), len(cli))
	}
}

// TestMCPNoDaemon: without a daemon and without --dir, quire mcp says
// what to do instead of serving nothing.
func TestMCPNoDaemon(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"mcp", "--agent", "x"}, &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: testEnv(t)})
	if code == 0 || !strings.Contains(errOut.String(), "quire serve") || out.Len() != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q: want an error naming quire serve and nothing on stdout", code, out.String(), errOut.String())
	}
}

// TestMCPOverTCPWithToken: `quire mcp --url … --token-file …` reaches a
// daemon's --api-listen with a bearer token, and the token's scope holds:
// its only agent is the default, another agent is refused.
func TestMCPOverTCPWithToken(t *testing.T) {
	dir := copyDir(t, "../../examples")
	getenv := testEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	d, err := daemon.New(ctx, daemon.Options{Dir: dir, Socket: filepath.Join(getenv("XDG_RUNTIME_DIR"), "q.sock"), CacheDir: t.TempDir(),
		APIListen: "127.0.0.1:0", Tokens: api.Tokens{"tok-study": {"studybuddy"}}})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	<-d.Ready()
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("# for quire mcp\ntok-study\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url := "http://" + d.APIAddr()
	cs := startMCP(t, getenv, "--url", url, "--token-file", tokenFile, "--user", "alice")
	res, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "quire://studybuddy/SOUL.md"})
	if err != nil || !strings.Contains(res.Contents[0].Text, "#") {
		t.Fatalf("read studybuddy's SOUL.md over --url: %+v, %v", res, err)
	}
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"mcp", "--url", url, "--token-file", tokenFile, "--agent", "concierge"},
		&env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: getenv})
	if code == 0 || !strings.Contains(errOut.String(), "concierge") {
		t.Errorf("quire mcp --agent concierge with studybuddy's token: exit %d, stderr %q", code, errOut.String())
	}
}
