package main

import (
	"bytes"
	"context"
	"errors"
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
		"ui":             {"ui", "--no-browser", "--socket", noSocket},
		"git-credential": {"git-credential", "bogus"},
		"lsp":            {"lsp", "--log", filepath.Join(nowhere, "lsp.log")},
		"version":        {"version", "extra"},
		"help":           {"help", "nothing"},
		"doctor":         {"doctor", "--repos", nowhere},
		"summon":         {"summon", "--agent", "x", "--socket", noSocket, "a bot"},
		"consolidate":    {"consolidate", "--socket", noSocket, "x"},
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

// TestHelpExamples: the examples of `quire help NAME` run from the
// repository root (issue #22: two of them failed there). Those that need
// a running daemon, a database or another machine are left out by name
// (doctor's read a daemon's directories); init's would write into the
// repository.
func TestHelpExamples(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		t.Skip("not in a git checkout: the examples read HEAD~1")
	}
	t.Chdir(root)
	needs := regexp.MustCompile(`^quire (status|serve|init|doctor|ui|summon|consolidate)\b|--database|--url|^quire mcp --agent`)
	ran := 0
	for _, c := range commands() {
		_, examples, ok := strings.Cut(c.help, "\nExamples:\n")
		if !ok {
			continue
		}
		for _, line := range strings.Split(examples, "\n") {
			line, _, _ = strings.Cut(strings.TrimSpace(line), "#")
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "quire ") || needs.MatchString(line) {
				continue
			}
			args, err := splitWords(line)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			var out, errOut bytes.Buffer
			if code := run(context.Background(), args[1:], &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: testEnv(t)}); code != 0 {
				t.Errorf("%s: exit %d\n%s", line, code, errOut.String())
			}
			ran++
		}
	}
	if ran < 10 {
		t.Errorf("ran %d examples; the help texts have more", ran)
	}
}

// splitWords splits a command line as a shell does words with single and
// double quotes (no escapes, variables or globs: examples have none).
func splitWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, errors.New("unterminated quote")
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}
