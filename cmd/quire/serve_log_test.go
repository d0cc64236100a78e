package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/client"
)

// serveDir runs `quire serve --dir` on a new workspace made of files
// (and of links: a value "-> target" makes a symbolic link) until the test
// ends, and returns a client of its socket and its log.
func serveDir(t *testing.T, files map[string]string) (*client.Client, *syncBuffer, string) {
	t.Helper()
	tmp, err := os.MkdirTemp("", "ql") // short: the socket path must fit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	ws := filepath.Join(tmp, "ws")
	for name, content := range files {
		p := filepath.Join(ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "-> "); ok {
			err = os.Symlink(target, p)
		} else {
			err = os.WriteFile(p, []byte(content), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	sock := filepath.Join(tmp, "q.sock")
	getenv := func(k string) string {
		if k == "XDG_RUNTIME_DIR" || k == "XDG_CONFIG_HOME" || k == "HOME" {
			return tmp
		}
		return ""
	}
	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--dir", ws, "--socket", sock, "--cache-dir", filepath.Join(tmp, "cache"), "--embedder", "none"},
			&env{stdout: &syncBuffer{}, stderr: logs, getenv: getenv})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("serve did not stop")
		}
	})
	c := &client.Client{Socket: sock}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if st, err := c.Status(ctx); err == nil && len(st.Agents) == 1 && strings.Contains(logs.String(), `"msg":"deployed"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon never deployed:\n%s", logs.String())
		}
	}
	return c, logs, tmp
}

// TestAgentWritesLogNoInfo: at the default log level an agent's writes
// (many a minute) add no INFO lines; INFO stays for what an operator acts
// on (issue #13, item 13: two INFO lines per append).
func TestAgentWritesLogNoInfo(t *testing.T) {
	ctx := context.Background()
	c, logs, _ := serveDir(t, map[string]string{"agent.yaml": "name: bot\n", "SOUL.md": "# Soul\n\nCalm.\n", "MEMORY.md": "# Memory\n\nTea at four.\n"})
	// The start ends with its memory returned, once indexed (INFO).
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(logs.String(), `"msg":"start-up indexed; its memory returned to the system"`); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the daemon never indexed bot:\n%s", logs.String())
		}
	}
	if !strings.Contains(logs.String(), `"level":"INFO","msg":"deployed"`) {
		t.Fatalf("the start's deploy is not at INFO (the log format changed?):\n%s", logs.String())
	}
	before := len(logs.String())
	for i := range 3 {
		if _, err := c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: "Note " + string(rune('a'+i)) + "."}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.WriteFile(ctx, "bot", "memory/notes.md", "", "*", []byte("# Notes\n")); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(logs.String()[before:], "\n") {
		if strings.Contains(line, `"level":"INFO"`) {
			t.Errorf("an agent's write logged at INFO: %s", line)
		}
	}
}

// TestServeDirReadsNoLink: `serve --dir` reads its working tree as the
// CLI does: a link out of the tree reaches neither a served prompt nor a
// file read (issue #13, item 6).
func TestServeDirReadsNoLink(t *testing.T) {
	ctx := context.Background()
	secret := filepath.Join(t.TempDir(), "secret.md")
	if err := os.WriteFile(secret, []byte("TOP-SECRET-0b5e\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, logs, _ := serveDir(t, map[string]string{
		"agent.yaml":     "name: bot\n",
		"SOUL.md":        "# Soul\n\nCalm.\n",
		"TOOLS.md":       "-> " + secret,
		"memory/link.md": "-> " + secret,
	})
	// The prompt is refused as the CLI refuses it, naming the link.
	p, err := c.Prompt(ctx, "bot", api.PromptRequest{})
	if err == nil && strings.Contains(p.Prompt, "TOP-SECRET") {
		t.Errorf("the served prompt holds the linked file:\n%s", p.Prompt)
	} else if err != nil && !strings.Contains(err.Error(), "TOOLS.md: is a symbolic link") {
		t.Errorf("prompt: %v, want the refusal of TOOLS.md's link", err)
	}
	for _, name := range []string{"TOOLS.md", "memory/link.md"} {
		f, err := c.ReadFile(ctx, "bot", name, "")
		if err == nil {
			t.Errorf("GET %s answered %q, want the refusal of a link", name, f.Content)
		} else if !strings.Contains(err.Error(), name+": is a symbolic link") {
			t.Errorf("GET %s: %v, want the refusal of a link", name, err)
		}
	}
	if strings.Contains(logs.String(), "TOP-SECRET") {
		t.Errorf("the log holds the linked file:\n%s", logs.String())
	}
}
