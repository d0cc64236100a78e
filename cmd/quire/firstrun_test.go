package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/client"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/templates"
)

// TestNewUserFirstPromptEverySurface: a user who never wrote anything gets
// the first-run ritual — their seeded USER.md and BOOTSTRAP.md (the
// template bytes) and the First Run section — from `quire prompt`, the
// daemon's API and `quire mcp --dir` alike, for a predefined and an open
// agent, and reading it writes nothing.
func TestNewUserFirstPromptEverySurface(t *testing.T) {
	dir := copyDir(t, "../../examples")
	getenv := testEnv(t)
	c := startDirDaemon(t, dir, getenv)
	ctx := context.Background()
	const user = "brand-new-user"
	for _, tc := range []struct {
		agent, template string
	}{
		{"concierge", templates.BootstrapPredefined}, // predefined
		{"studybuddy", "BOOTSTRAP.md"},               // open
	} {
		boot, err := templates.Template(tc.template)
		if err != nil {
			t.Fatal(err)
		}
		cli := cliPrompt(t, getenv, "--dir", dir, "--agent", tc.agent, "--user", user)
		viaAPI, err := c.Prompt(ctx, tc.agent, api.PromptRequest{User: user, Session: prompt.SessionMain})
		if err != nil {
			t.Fatal(err)
		}
		cs := startMCP(t, getenv, "--dir", dir, "--agent", tc.agent, "--user", user, "--cache-dir", t.TempDir())
		viaMCP := mcpPrompt(t, cs, nil)
		if cli != viaAPI.Prompt || cli != viaMCP {
			t.Errorf("%s: prompts differ: CLI %d bytes, API %d bytes, MCP %d bytes", tc.agent, len(cli), len(viaAPI.Prompt), len(viaMCP))
		}
		head := string(boot[:120])
		for what, s := range map[string]string{
			"the First Run section": "## First Run\n",
			"BOOTSTRAP.md":          "<context_file name=\"BOOTSTRAP.md\">\n" + head,
			"USER.md":               "<context_file name=\"USER.md\">\n",
		} {
			if !strings.Contains(cli, s) {
				t.Errorf("%s: a new user's first prompt lacks %s", tc.agent, what)
			}
		}
		for _, f := range viaAPI.Report.Files {
			if (f.Name == "USER.md" || f.Name == "BOOTSTRAP.md") && (f.User != user || f.Status == prompt.StatusMissing) {
				t.Errorf("%s: %s reported as %s of user %q, want the user's seed", tc.agent, f.Name, f.Status, f.User)
			}
		}
	}
	for _, agent := range []string{"concierge", "studybuddy"} {
		if _, err := os.Stat(filepath.Join(dir, "agents", agent, "users", user)); !os.IsNotExist(err) {
			t.Errorf("%s: reading a prompt created the user's directory (%v)", agent, err)
		}
	}
}

// startDirDaemon runs a daemon on the work tree dir until the test ends
// and returns a client of its API.
func startDirDaemon(t *testing.T, dir string, getenv func(string) string) *client.Client {
	t.Helper()
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
	return &client.Client{Socket: sock}
}
