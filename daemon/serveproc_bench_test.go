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
	"strings"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/client"
)

// serveProcess is `quire serve --repos` (built from this module) running
// as a process of its own, as a deployment runs it: the scale
// benchmarks read its CPU time and resident set from /proc, without the
// benchmark's binary and clients in the figures.
type serveProcess struct {
	cmd *exec.Cmd
	c   *client.Client
}

// buildQuire builds bin/quire of this module into a temporary directory
// and returns its path.
func buildQuire(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(shortTempDir(b), "quire")
	build := exec.Command("go", "build", "-o", bin, "./cmd/quire")
	build.Dir = moduleRoot(b)
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startServe starts bin as `quire serve --repos repos` on cache, with
// the benchmark's embedder, and returns once it has indexed what it
// serves (every agent's deployed commit) and returned the start-up's
// garbage. The process is stopped when the benchmark ends, if not
// before.
func startServe(b *testing.B, bin, repos, cache string) *serveProcess {
	b.Helper()
	tmp := shortTempDir(b)
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
	p := &serveProcess{cmd: cmd, c: &client.Client{Socket: sock}}
	b.Cleanup(p.stop)
	// quire serve logs this once it has indexed what it serves and
	// returned the start-up's garbage.
	waitLog(b, stderr, "start-up indexed; its memory returned to the system")
	return p
}

// stop interrupts the process and waits for it to end.
func (p *serveProcess) stop() {
	if p.cmd.ProcessState != nil {
		return
	}
	p.cmd.Process.Signal(os.Interrupt)
	p.cmd.Wait()
}

// rss is the process's resident set in bytes.
func (p *serveProcess) rss(b *testing.B) int64 {
	return procField(b, "/proc/"+strconv.Itoa(p.cmd.Process.Pid)+"/status", "VmRSS", 1024)
}

// cpu is the CPU time the process and the children it waited for (git
// runs for roll-ups) have used.
func (p *serveProcess) cpu(b *testing.B) time.Duration {
	self, children := procCPU(b, "/proc/"+strconv.Itoa(p.cmd.Process.Pid)+"/stat")
	return self + children
}

// gitCPU is the CPU time of the process's children it waited for: the
// git commands it ran (roll-ups, repacks).
func (p *serveProcess) gitCPU(b *testing.B) time.Duration {
	_, children := procCPU(b, "/proc/"+strconv.Itoa(p.cmd.Process.Pid)+"/stat")
	return children
}

// procCPU reads a /proc/PID/stat file: the CPU time of the process
// (utime and stime, fields 14 and 15) and of the children it waited for
// (cutime and cstime, 16 and 17), in clock ticks (USER_HZ, 100 a second
// on Linux), counted after the command's closing parenthesis.
func procCPU(b *testing.B, file string) (self, children time.Duration) {
	data, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	// f[0] is field 3 (state): field n is f[n-3].
	var ticks [4]int64
	for i := range ticks {
		v, err := strconv.ParseInt(f[14+i-3], 10, 64)
		if err != nil {
			b.Fatalf("%s: field %d: %v", file, 14+i, err)
		}
		ticks[i] = v
	}
	tick := time.Second / 100
	return time.Duration(ticks[0]+ticks[1]) * tick, time.Duration(ticks[2]+ticks[3]) * tick
}

// waitIndexed returns once every agent's deployed commit is indexed. It
// subscribes to the events first and reads the status again after each
// index event, so none is missed and a run that took in a newer commit
// counts too.
func (p *serveProcess) waitIndexed(b *testing.B) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	events, err := p.c.Subscribe(ctx)
	if err != nil {
		b.Fatalf("subscribe to the events: %v", err)
	}
	for {
		st, err := p.c.Status(ctx)
		if err != nil {
			b.Fatalf("status: %v", err)
		}
		if allIndexed(st) {
			return
		}
		for e := range events {
			if e.Type == "index" {
				break
			}
		}
		if ctx.Err() != nil {
			b.Fatalf("agents not indexed after a minute: %+v", st.Agents)
		}
	}
}

// allIndexed reports whether every agent of st has its deployed commit
// indexed.
func allIndexed(st api.Status) bool {
	for _, a := range st.Agents {
		if a.Indexed != a.Deployed {
			return false
		}
	}
	return true
}

// restartedProcessRSS starts `quire serve` (bin) as a process of its
// own on the repositories and cache, waits until it is indexed and
// returns the process's resident set: what a daemon restarted on that
// data takes.
func restartedProcessRSS(b *testing.B, bin, repos, cache string) int64 {
	b.Helper()
	p := startServe(b, bin, repos, cache)
	defer p.stop()
	return p.rss(b)
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
