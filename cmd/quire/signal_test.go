package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSignalStopsCommands: every command stops soon after SIGINT or
// SIGTERM (issue #13, item 7: `check` and `prompt` once ran on for 15
// minutes). The real main runs (TestMain's "quire" is main), each command
// is signalled once it answers, and must exit by itself, not be killed by
// the signal: the daemon and the language server shut down, the others
// within main's one-second grace.
func TestSignalStopsCommands(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT/SIGTERM to send")
	}
	bin := filepath.Join(quireOnPath(t), "quire")
	tmp, err := os.MkdirTemp("", "qsig") // short: the socket path must fit
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

	// Each ready function returns once the command answers (its signal
	// handling is in place from main's first line).
	mcpReady := func(in io.Writer, out *bufio.Reader) error {
		fmt.Fprintln(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
		_, err := out.ReadString('\n')
		return err
	}
	lspReady := func(in io.Writer, out *bufio.Reader) error {
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`
		fmt.Fprintf(in, "Content-Length: %d\r\n\r\n%s", len(body), body)
		line, err := out.ReadString('\n')
		if err == nil && !strings.HasPrefix(line, "Content-Length") {
			err = fmt.Errorf("answer %q", line)
		}
		return err
	}
	serveReady := func(io.Writer, *bufio.Reader) error {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if fi, err := os.Stat(sock); err == nil && fi.Mode()&os.ModeSocket != 0 {
				return nil
			}
		}
		return errors.New("no socket")
	}
	tests := []struct {
		name  string
		args  []string
		ready func(io.Writer, *bufio.Reader) error
		sig   syscall.Signal
	}{
		{"mcp --dir, SIGINT", []string{"mcp", "--dir", ws, "--embedder", "none"}, mcpReady, syscall.SIGINT},
		{"mcp --dir, SIGTERM", []string{"mcp", "--dir", ws, "--embedder", "none"}, mcpReady, syscall.SIGTERM},
		{"lsp, SIGINT", []string{"lsp"}, lspReady, syscall.SIGINT},
		{"serve --dir, SIGTERM", []string{"serve", "--dir", ws, "--socket", sock, "--embedder", "none"}, serveReady, syscall.SIGTERM},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(bin, tt.args...)
			cmd.Dir = tmp
			cmd.Env = []string{"HOME=" + tmp, "XDG_RUNTIME_DIR=" + tmp, "XDG_CONFIG_HOME=" + filepath.Join(tmp, ".config"), "XDG_CACHE_HOME=" + filepath.Join(tmp, ".cache"), "PATH=" + os.Getenv("PATH")}
			// Pipes of our own (not exec's): stdin stays open, since closing
			// it is not how these commands are stopped here, and stdout is
			// read after the command has exited too.
			inR, inW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			outR, outW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer inW.Close()
			defer outR.Close()
			stderr := &syncBuffer{}
			cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			inR.Close()
			outW.Close()
			defer cmd.Process.Kill()
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			readyErr := make(chan error, 1)
			go func() {
				err := tt.ready(inW, bufio.NewReader(outR))
				readyErr <- err
				io.Copy(io.Discard, outR) // keep the pipe drained
			}()
			select {
			case err := <-readyErr:
				if err != nil {
					t.Fatalf("not ready: %v\nstderr: %s", err, stderr.String())
				}
			case <-time.After(60 * time.Second):
				t.Fatalf("not ready after a minute\nstderr: %s", stderr.String())
			}
			if err := cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			select {
			case err := <-exited:
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
						t.Fatalf("killed by %v, not stopped by quire\nstderr: %s", ws.Signal(), stderr.String())
					}
				}
				// A loaded machine may be slow to schedule it; a hang is
				// not a few seconds.
				if took := time.Since(start); took > 5*time.Second {
					t.Errorf("stopped %v after the signal, want about a second", took)
				}
				// A stop is no failure: the MCP SDK's "server run
				// cancelled" is not logged at ERROR (issue #22).
				if strings.Contains(stderr.String(), "ERROR") {
					t.Errorf("an ERROR logged on a clean stop:\n%s", stderr.String())
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("still running 20 s after %v\nstderr: %s", tt.sig, stderr.String())
			}
		})
	}
}
