package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestErrorPrefixOnce: run prints "quire NAME: " before a command's
// error, so no error a command returns may carry a prefix of its own:
// `quire mcp: quire mcp: quire daemon: …` said one thing three times
// (issue #22). Every command is driven into an error here.
func TestErrorPrefixOnce(t *testing.T) {
	getenv := testEnv(t)
	tmp := t.TempDir()
	ws := filepath.Join(tmp, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "agent.yaml"), []byte("name: bot\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	nowhere := filepath.Join(tmp, "nowhere")
	noSocket := filepath.Join(tmp, "none.sock")
	cases := map[string][]string{
		"init":           {"init", "a", "b"},
		"check":          {"check", nowhere},
		"prompt":         {"prompt", "--dir", nowhere},
		"skills":         {"skills", "list", "--dir", nowhere},
		"search":         {"search", "x", "--dir", ws, "--agent", "nobody"},
		"mcp":            {"mcp", "--agent", "x", "--socket", noSocket},
		"serve":          {"serve", "--dir", ws, "--api-listen", "127.0.0.1:0", "--token-file", nowhere},
		"index":          {"index", "--dir", nowhere},
		"status":         {"status", "--socket", noSocket},
		"git-credential": {"git-credential", "bogus"},
		"lsp":            {"lsp", "--log", filepath.Join(nowhere, "lsp.log")},
		"version":        {"version", "extra"},
		"help":           {"help", "nothing"},
	}
	// A second "quire: " or "quire NAME: " after run's own.
	doubled := regexp.MustCompile(`^quire( [a-z-]+)?: .*\bquire( [a-z-]+)?: `)
	for _, c := range commands() {
		args, ok := cases[c.name]
		if !ok {
			t.Errorf("no case for command %s: add one that fails", c.name)
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(context.Background(), args, &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: getenv})
			if code == 0 {
				t.Fatalf("quire %s succeeded; the case must fail", strings.Join(args, " "))
			}
			first := strings.SplitN(errOut.String(), "\n", 2)[0]
			if !strings.HasPrefix(first, "quire") {
				t.Errorf("stderr %q does not start with quire's prefix", errOut.String())
			}
			if doubled.MatchString(first) {
				t.Errorf("a prefix twice: %q", first)
			}
		})
	}
}
