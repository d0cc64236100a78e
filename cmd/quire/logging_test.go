package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestNewLogger: text or JSON as asked (JSON when the output is no
// terminal), durations as durations in both, and a context cancellation
// logged at ERROR (as the MCP SDK does on a stop) demoted to DEBUG.
func TestNewLogger(t *testing.T) {
	tests := []struct {
		format string
		want   []string // lines, as regular expressions
	}{
		{"text", []string{
			`^time=\S+ level=INFO msg=deployed took=1.49ms poll=30s tiny=999ns$`,
			`^time=\S+ level=WARN msg="a real failure" err="disk full"$`,
		}},
		{"json", []string{
			`^\{"time":"[^"]+","level":"INFO","msg":"deployed","took":"1.49ms","poll":"30s","tiny":"999ns"\}$`,
			`^\{"time":"[^"]+","level":"WARN","msg":"a real failure","err":"disk full"\}$`,
		}},
		{"", []string{ // a buffer is no terminal
			`^\{"time":"[^"]+","level":"INFO","msg":"deployed","took":"1.49ms","poll":"30s","tiny":"999ns"\}$`,
			`^\{"time":"[^"]+","level":"WARN","msg":"a real failure","err":"disk full"\}$`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			var buf bytes.Buffer
			log, err := newLogger(&buf, "info", tt.format)
			if err != nil {
				t.Fatal(err)
			}
			log.Info("deployed", "took", 1485344*time.Nanosecond, "poll", 30*time.Second, "tiny", 999*time.Nanosecond)
			log.Error("server run cancelled", "error", context.Canceled)
			log.Warn("fetch", "err", fmt.Errorf("fetch: %w", context.Canceled))
			log.Warn("a real failure", "err", errors.New("disk full"))
			lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
			if len(lines) != len(tt.want) {
				t.Fatalf("%d lines, want %d:\n%s", len(lines), len(tt.want), buf.String())
			}
			for i, w := range tt.want {
				if !regexp.MustCompile(w).MatchString(lines[i]) {
					t.Errorf("line %d:\n%s\nwant %s", i+1, lines[i], w)
				}
			}
		})
	}
	// At DEBUG the cancellation is there, at DEBUG.
	var buf bytes.Buffer
	log, _ := newLogger(&buf, "debug", "text")
	log.Error("server run cancelled", "error", context.Canceled)
	if want := `level=DEBUG msg="server run cancelled" error="context canceled"`; !strings.Contains(buf.String(), want) {
		t.Errorf("at debug: %q, want %s", buf.String(), want)
	}
	for _, bad := range []struct{ level, format, want string }{
		{"loud", "", `--log-level "loud": use debug, info, warn or error`},
		{"info", "yaml", `--log-format "yaml": use text or json`},
	} {
		if _, err := newLogger(&buf, bad.level, bad.format); err == nil || err.Error() != bad.want {
			t.Errorf("newLogger(%q, %q) = %v, want %s", bad.level, bad.format, err, bad.want)
		}
	}
}

func TestRoundDuration(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string
	}{
		{0, "0s"}, {999, "999ns"}, {1234, "1.23µs"}, {1485344, "1.49ms"}, {256679, "257µs"},
		{1234567890, "1.23s"}, {30 * time.Second, "30s"}, {90540 * time.Millisecond, "1m30.5s"}, {-1485344, "-1.49ms"},
	}
	for _, tt := range tests {
		if got := roundDuration(tt.in).String(); got != tt.want {
			t.Errorf("roundDuration(%d) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// TestServeLogs: `quire serve` logs in the format asked, with durations
// as durations, and a stop by a signal is "stopped" with the signal at
// INFO, and no ERROR line (issue #22).
func TestServeLogs(t *testing.T) {
	for _, tt := range []struct {
		format  string
		took    string // a deploy's duration
		stopped string
	}{
		{"text", `level=INFO msg=deployed .* took=[0-9.]+(µs|ms|s)\n`, "level=INFO msg=stopped component=daemon signal=terminated\n"},
		{"json", `"level":"INFO","msg":"deployed",.*"took":"[0-9.]+(µs|ms|s)"`, `"level":"INFO","msg":"stopped","component":"daemon","signal":"terminated"}`},
	} {
		t.Run(tt.format, func(t *testing.T) {
			tmp, err := os.MkdirTemp("", "qlog") // short: the socket path must fit
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(tmp) })
			ws := filepath.Join(tmp, "ws")
			if err := os.MkdirAll(ws, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ws, "agent.yaml"), []byte("name: bot\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			getenv := func(k string) string {
				switch k {
				case "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "HOME":
					return tmp
				case "QUIRE_LOG_FORMAT": // the flag through the environment
					return tt.format
				}
				return ""
			}
			logs := newWatchBuffer("msg=indexed", `"msg":"indexed"`)
			ctx, cancel := context.WithCancelCause(context.Background())
			done := make(chan int, 1)
			go func() {
				done <- run(ctx, []string{"serve", "--dir", ws, "--socket", filepath.Join(tmp, "q.sock"), "--cache-dir", filepath.Join(tmp, "cache"), "--embedder", "none"},
					&env{stdout: &bytes.Buffer{}, stderr: logs, getenv: getenv})
			}()
			select {
			case <-logs.matched:
			case code := <-done:
				t.Fatalf("serve exited %d:\n%s", code, logs)
			case <-time.After(30 * time.Second):
				t.Fatalf("serve never indexed:\n%s", logs)
			}
			cancel(signalStop{syscall.SIGTERM})
			select {
			case code := <-done:
				if code != 0 {
					t.Errorf("exit %d after SIGTERM, want 0", code)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("serve did not stop")
			}
			out := logs.String()
			if !regexp.MustCompile(tt.took).MatchString(out) {
				t.Errorf("no deploy with a readable duration (%s):\n%s", tt.took, out)
			}
			if !strings.Contains(out, tt.stopped) {
				t.Errorf("no %s:\n%s", tt.stopped, out)
			}
			if strings.Contains(out, "ERROR") {
				t.Errorf("an ERROR line on a clean stop:\n%s", out)
			}
		})
	}
}

// watchBuffer is a log that closes matched once it holds one of the
// strings.
type watchBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	want    []string
	matched chan struct{}
}

func newWatchBuffer(want ...string) *watchBuffer {
	return &watchBuffer{want: want, matched: make(chan struct{})}
}

func (w *watchBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.b.Write(p)
	if w.want != nil {
		for _, s := range w.want {
			if strings.Contains(w.b.String(), s) {
				close(w.matched)
				w.want = nil
				break
			}
		}
	}
	return n, err
}

func (w *watchBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
