package daemon_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon/client"
)

// restartedProcessRSS starts `quire serve` (built from this module) as a
// process of its own on dirs' repositories and cache, waits until agent
// is indexed and returns the process's resident set: what a daemon
// restarted on that data takes, without the benchmark's own binary,
// clients and earlier daemon in the figure.
func restartedProcessRSS(b *testing.B, repos, cache, agent string) int64 {
	b.Helper()
	tmp := shortTempDir(b)
	bin := filepath.Join(tmp, "quire")
	build := exec.Command("go", "build", "-o", bin, "./cmd/quire")
	build.Dir = moduleRoot(b)
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	sock := filepath.Join(tmp, "q.sock")
	embedder := os.Getenv("QUIRE_BENCH_EMBEDDER")
	if embedder == "" {
		embedder = "builtin"
	}
	cmd := exec.Command(bin, "serve", "--repos", repos, "--cache-dir", cache, "--embedder", embedder,
		"--socket", sock, "--git-listen", "127.0.0.1:0", "--ui-listen", "", "--state-dir", filepath.Join(tmp, "state"),
		"--log-format", "json")
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+tmp)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}()
	// quire serve logs this once it has indexed what it serves and
	// returned the start-up's garbage to the system.
	waitLog(b, stderr, "start-up indexed; its memory returned to the system")
	waitAgentIndexed(b, &client.Client{Socket: sock}, agent)
	return procField(b, "/proc/"+strconv.Itoa(cmd.Process.Pid)+"/status", "VmRSS", 1024)
}

// moduleRoot is the module's directory, wherever the benchmark binary
// runs: this file's directory's parent.
func moduleRoot(b *testing.B) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		b.Fatal("no source path to build quire from")
	}
	return filepath.Dir(filepath.Dir(file))
}

// waitLog reads the daemon's JSON log until a line's message is msg,
// then drains the rest in the background.
func waitLog(b *testing.B, log io.Reader, msg string) {
	b.Helper()
	sc := bufio.NewScanner(log)
	for sc.Scan() {
		var line struct{ Msg string }
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == msg {
			go io.Copy(io.Discard, log)
			return
		}
	}
	b.Fatalf("the daemon stopped before it logged %q: %v", msg, sc.Err())
}

// waitAgentIndexed waits for agent's deployed commit to be indexed: it
// subscribes to the daemon's events first, so that an index event after
// the status check is not missed.
func waitAgentIndexed(b *testing.B, c *client.Client, agent string) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	events, err := c.Subscribe(ctx)
	if err != nil {
		b.Fatalf("events: %v", err)
	}
	for {
		st, err := c.Status(ctx)
		if err != nil {
			b.Fatalf("status: %v", err)
		}
		for _, a := range st.Agents {
			if a.Name == agent && a.Deployed != "" && a.Indexed == a.Deployed {
				return
			}
		}
		select {
		case _, ok := <-events:
			if !ok {
				b.Fatalf("agent %s not indexed: the event stream ended (%v)", agent, ctx.Err())
			}
		}
	}
}
