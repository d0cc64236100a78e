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

// TestAgentWritesLogNoInfo: at the default log level an agent's writes
// (many a minute) add no INFO lines; INFO stays for what an operator acts
// on (issue #13, item 13: two INFO lines per append).
func TestAgentWritesLogNoInfo(t *testing.T) {
	tmp, err := os.MkdirTemp("", "ql") // short: the socket path must fit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	ws := filepath.Join(tmp, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"agent.yaml": "name: bot\n", "SOUL.md": "# Soul\n\nCalm.\n", "MEMORY.md": "# Memory\n\nTea at four.\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
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
		if st, err := c.Status(ctx); err == nil && len(st.Agents) == 1 && strings.Contains(logs.String(), `"msg":"indexed"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon never deployed and indexed bot:\n%s", logs.String())
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
