package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/prompt"
)

// TestPromptModesEverySurface: the modes task, minimal and none reach the
// same bytes through `quire prompt --mode`, the API's mode field and the
// MCP prompt's mode argument; an unknown mode is a usage error.
func TestPromptModesEverySurface(t *testing.T) {
	dir := copyDir(t, "../../examples")
	getenv := testEnv(t)
	c := startDirDaemon(t, dir, getenv)
	cs := startMCP(t, getenv, "--dir", dir, "--agent", "concierge", "--user", "ines.carvalho", "--cache-dir", t.TempDir())
	full := cliPrompt(t, getenv, "--dir", dir, "--agent", "concierge", "--user", "ines.carvalho")
	for _, mode := range []prompt.Mode{prompt.ModeTask, prompt.ModeMinimal, prompt.ModeNone} {
		cli := cliPrompt(t, getenv, "--dir", dir, "--agent", "concierge", "--user", "ines.carvalho", "--mode", string(mode))
		viaAPI, err := c.Prompt(context.Background(), "concierge", api.PromptRequest{User: "ines.carvalho", Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		viaMCP := mcpPrompt(t, cs, map[string]string{"mode": string(mode)})
		if cli != viaAPI.Prompt || cli != viaMCP || viaAPI.Report.Mode != mode {
			t.Errorf("%s: prompts differ: CLI %d bytes, API %d bytes (report mode %q), MCP %d bytes", mode, len(cli), len(viaAPI.Prompt), viaAPI.Report.Mode, len(viaMCP))
		}
		if len(cli) >= len(full) || !strings.HasPrefix(cli, "You are Lúcia") {
			t.Errorf("%s: %d bytes, the full prompt %d: not a leaner prompt of the same agent", mode, len(cli), len(full))
		}
	}
	if _, err := c.Prompt(context.Background(), "concierge", api.PromptRequest{Mode: "lean"}); apiCode(err) != api.CodeBadRequest {
		t.Errorf("an unknown mode through the API: %v", err)
	}
	var out strings.Builder
	if code := run(context.Background(), []string{"prompt", "--dir", dir, "--agent", "concierge", "--mode", "lean"}, &env{stdout: &out, stderr: &out, getenv: getenv}); code == 0 || !strings.Contains(out.String(), "use full, task, minimal or none") {
		t.Errorf("quire prompt --mode lean: exit %d: %s", code, out.String())
	}
}

// apiCode is the API error code of err, or "".
func apiCode(err error) api.Code {
	var e *api.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
