package daemon_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
)

// restartedProcessRSS starts `quire serve` (built from this module) as a
// process of its own on the repositories and cache, waits until it
// is indexed and returns the process's resident set: what a daemon
// restarted on that data takes, without the benchmark's own binary,
// clients and earlier daemon in the figure.
func restartedProcessRSS(b *testing.B, repos, cache string) int64 {
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
	// quire serve logs this once it has indexed what it serves (every
	// agent's deployed commit) and returned the start-up's garbage.
	waitLog(b, stderr, "start-up indexed; its memory returned to the system")
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
