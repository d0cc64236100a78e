package daemon_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/client"
	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/workspace"
)

// BenchmarkAppendGrowth: memory appends to one agent of `quire serve
// --repos` by 32 clients as fast as they are acknowledged, spread over
// 1,000 users, with the builtin embedder (QUIRE_BENCH_EMBEDDER=none:
// none), as history grows to QUIRE_BENCH_APPENDS (10,000 by default).
// The daemon runs as a process of its own, as deployed, so its figures
// hold neither the clients nor the benchmark (QUIRE_BENCH_INPROCESS=1
// runs it in the benchmark's process instead, for -cpuprofile and
// QUIRE_BENCH_HEAPPROFILE; its CPU then counts the clients too).
//
// It logs, per window of a tenth of the appends (at least 1,000: at
// 100,000 the last 10k against the first 10k), the rate, the
// p99 latency, the daemon's CPU per append (git children included) and
// the clients' (the benchmark process's). It reports the first and the
// last window, the daemon's CPU per append over the whole run (and the
// part of it its git children took: roll-ups), and its
// resident set once the last append is indexed (rss-MB); then it
// restarts the daemon on the same repositories and cache and reports
// its resident set once indexed (restart-proc-rss-MB).
//
// Targets: ≥ 3,000 appends/s, ≤ 0.3 ms of daemon CPU an append, the
// last window's p99 within 1.2× the first's, the resident set under
// appends within 1.5× the restarted one, and the restarted one at most
// 10× the memory text it indexes (text-MB: the memory files on live).
// Run with -benchtime=1x.
func BenchmarkAppendGrowth(b *testing.B) {
	total := 10_000
	if s := os.Getenv("QUIRE_BENCH_APPENDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatalf("QUIRE_BENCH_APPENDS: %v", err)
		}
		total = n
	}
	window := max(1000, total/10)
	dirs := daemon.Options{ReposDir: filepath.Join(shortTempDir(b), "repos"), CacheDir: filepath.Join(shortTempDir(b), "cache"), Embedder: benchEmbedder(b)}
	bin := buildQuire(b)
	seed := startDaemon(b, dirs)
	seed.push(b, newWorkTree(b, botFiles), "bot")
	seed.stop()
	d := startAppendDaemon(b, bin, dirs)
	var samples []appendSample
	cpu0, git0 := d.cpu(b), d.gitCPU(b)
	b.ResetTimer()
	for done := 0; done < total; done += window {
		s := appendWindow(b, d, done, window)
		samples = append(samples, s)
		b.Logf("appends %6d: %6.0f/s p99 %6.1f ms cpu %.3f ms/append (clients %.3f) rss %d MB",
			done+window, s.rate, s.p99, s.cpu, s.clientCPU, d.rss(b)>>20)
	}
	b.StopTimer()
	d.waitIndexed(b)
	b.ReportMetric(ms(d.cpu(b)-cpu0)/float64(total), "cpu-ms/append")
	b.ReportMetric(ms(d.gitCPU(b)-git0)/float64(total), "git-cpu-ms/append")
	rss := d.rss(b)
	if d.inProcess() {
		logHeap(b, "under appends")
		writeHeapProfile(b, "")
	}
	text := memoryText(b, filepath.Join(dirs.ReposDir, "bot.git"))
	d.stop()
	b.ReportMetric(float64(restartedProcessRSS(b, bin, dirs.ReposDir, dirs.CacheDir)>>20), "restart-proc-rss-MB")
	first, last := samples[0], samples[len(samples)-1]
	b.ReportMetric(first.rate, "first-appends/s")
	b.ReportMetric(last.rate, "last-appends/s")
	b.ReportMetric(first.p99, "first-p99-ms")
	b.ReportMetric(last.p99, "last-p99-ms")
	b.ReportMetric(last.cpu, "last-cpu-ms/append")
	b.ReportMetric(last.clientCPU, "last-client-cpu-ms/append")
	b.ReportMetric(float64(rss>>20), "rss-MB")
	b.ReportMetric(float64(text)/(1<<20), "text-MB")
}

// appendSample is one window of appends: its rate, its p99 latency in
// ms, and the daemon's and the clients' CPU per append in ms.
type appendSample struct {
	rate, p99, cpu, clientCPU float64
}

// appendWindow makes appends done to done+window-1 with 32 clients and
// measures them.
func appendWindow(b *testing.B, d appendDaemon, done, window int) appendSample {
	const clients, users = 32, 1000
	ctx := context.Background()
	c := d.client()
	cpu0, t0 := d.cpu(b), time.Now()
	self0, _ := procCPU(b, "/proc/self/stat")
	var next atomic.Int64
	lat := make([]time.Duration, window)
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < window; i = int(next.Add(1)) - 1 {
				n := done + i
				start := time.Now()
				req := api.AppendRequest{User: fmt.Sprintf("u%04d", n%users), Text: fmt.Sprintf("entry %d: met customer %d about invoice %d", n, n%977, n*7)}
				if _, err := c.MemoryAppend(ctx, "bot", req); err != nil {
					b.Error(err)
					return
				}
				lat[i] = time.Since(start)
			}
		}()
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	el := time.Since(t0)
	slices.Sort(lat)
	s := appendSample{rate: float64(window) / el.Seconds(), p99: ms(lat[window*99/100]), cpu: ms(d.cpu(b)-cpu0) / float64(window)}
	if !d.inProcess() {
		self, _ := procCPU(b, "/proc/self/stat")
		s.clientCPU = ms(self-self0) / float64(window)
	}
	return s
}

// appendDaemon is the daemon BenchmarkAppendGrowth appends to.
type appendDaemon interface {
	client() *client.Client
	// cpu is the daemon's CPU time so far, git children included.
	cpu(b *testing.B) time.Duration
	// gitCPU is the CPU time of its git children so far.
	gitCPU(b *testing.B) time.Duration
	rss(b *testing.B) int64
	waitIndexed(b *testing.B)
	stop()
	inProcess() bool
}

// startAppendDaemon starts bin serving dirs, as a process of its own
// unless QUIRE_BENCH_INPROCESS is set.
func startAppendDaemon(b *testing.B, bin string, dirs daemon.Options) appendDaemon {
	if os.Getenv("QUIRE_BENCH_INPROCESS") != "" {
		return inProcessDaemon{startDaemon(b, dirs)}
	}
	return startServe(b, bin, dirs.ReposDir, dirs.CacheDir)
}

// inProcessDaemon is a daemon in the benchmark's own process.
type inProcessDaemon struct{ td *testDaemon }

func (d inProcessDaemon) client() *client.Client { return d.td.c }
func (d inProcessDaemon) cpu(b *testing.B) time.Duration {
	self, children := procCPU(b, "/proc/self/stat")
	return self + children
}
func (d inProcessDaemon) gitCPU(b *testing.B) time.Duration {
	_, children := procCPU(b, "/proc/self/stat")
	return children
}
func (d inProcessDaemon) rss(b *testing.B) int64   { return procStatus(b, "VmRSS") }
func (d inProcessDaemon) waitIndexed(b *testing.B) { d.td.waitIndexed(b) }
func (d inProcessDaemon) stop()                    { d.td.stop() }
func (d inProcessDaemon) inProcess() bool          { return true }

func (p *serveProcess) client() *client.Client { return p.c }
func (p *serveProcess) inProcess() bool        { return false }

// memoryText returns the size of the memory files (documents and daily
// logs) on the live branch of the bare repository repo: the text the
// memory index holds.
func memoryText(b *testing.B, repo string) int64 {
	var n int64
	for _, line := range strings.Split(git(b, repo, "ls-tree", "-r", "-l", "live"), "\n") {
		meta, path, ok := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 4 || !workspace.KindOf(path).IsMemory() {
			continue
		}
		size, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			b.Fatalf("ls-tree %s: %q: %v", repo, line, err)
		}
		n += size
	}
	if n == 0 {
		b.Fatalf("no memory text on live in %s", repo)
	}
	return n
}

// writeHeapProfile writes a heap profile to QUIRE_BENCH_HEAPPROFILE with
// suffix added, when that variable names a file.
func writeHeapProfile(b *testing.B, suffix string) {
	f := os.Getenv("QUIRE_BENCH_HEAPPROFILE")
	if f == "" {
		return
	}
	runtime.GC()
	out, err := os.Create(f + suffix)
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	if err := pprof.Lookup("heap").WriteTo(out, 0); err != nil {
		b.Fatal(err)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// logHeap logs the heap's live bytes, its size and the collector's goal.
func logHeap(b *testing.B, when string) {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	b.Logf("%s: rss %d MB, heap live %d MB, in use %d MB, from the OS %d MB, next GC at %d MB",
		when, procStatus(b, "VmRSS")>>20, m.HeapAlloc>>20, m.HeapInuse>>20, (m.HeapSys-m.HeapReleased)>>20, m.NextGC>>20)
}

// benchEmbedder is the embedder of the scale benchmarks: builtin (the
// cost of vectors) unless QUIRE_BENCH_EMBEDDER says none (the default
// configuration's: full text only).
func benchEmbedder(tb testing.TB) memory.Embedder {
	switch e := os.Getenv("QUIRE_BENCH_EMBEDDER"); e {
	case "", "builtin":
		return memory.Builtin{}
	case "none":
		return memory.None{}
	default:
		tb.Fatalf("QUIRE_BENCH_EMBEDDER %q: want builtin or none", e)
		return nil
	}
}
