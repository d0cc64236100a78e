package daemon_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
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
	"github.com/quirehq/quire/internal/testenv"
	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/workspace"
)

// BenchmarkAppendGrowth: memory appends to one agent of a --repos daemon
// by 32 clients as fast as they are acknowledged, spread over 1,000
// users, with the builtin embedder (QUIRE_BENCH_EMBEDDER=none: none), as
// history grows to QUIRE_BENCH_APPENDS (10,000 by default). It
// logs, per window of 1,000 appends, the rate, the p99 latency and the
// process's CPU per append (clients included: they run in the process),
// and reports the first and the last window and the resident set at the
// end. Targets: ≥ 3,000 appends/s, ≤ 0.3 ms CPU an append, the last
// window's p99 within 1.2× the first's. It then restarts the daemon on
// the same repositories and cache and reports its resident set once
// indexed, after the first daemon's memory was returned (restart-rss-MB;
// restart-min-rss-MB once its own garbage is returned too): the target
// is the resident set under appends (rss-MB, once the last append is
// indexed) within 1.5× of it, and the restarted resident set at most 10×
// the memory text it indexes (text-MB: the memory files on live). Run
// with -benchtime=1x.
func BenchmarkAppendGrowth(b *testing.B) {
	total := 10_000
	if s := os.Getenv("QUIRE_BENCH_APPENDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatalf("QUIRE_BENCH_APPENDS: %v", err)
		}
		total = n
	}
	const clients, window, users = 32, 1000, 1000
	ctx := context.Background()
	dirs := daemon.Options{ReposDir: filepath.Join(shortTempDir(b), "repos"), CacheDir: filepath.Join(shortTempDir(b), "cache"), Embedder: benchEmbedder(b)}
	td := startDaemon(b, dirs)
	td.push(b, newWorkTree(b, botFiles), "bot")
	type sample struct {
		rate, p99, cpu float64
	}
	var samples []sample
	b.ResetTimer()
	for done := 0; done < total; done += window {
		cpu0, t0 := testenv.CPUTime(), time.Now()
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
					if _, err := td.c.MemoryAppend(ctx, "bot", req); err != nil {
						b.Error(err)
						return
					}
					lat[i] = time.Since(start)
				}
			}()
		}
		wg.Wait()
		if b.Failed() {
			return
		}
		el := time.Since(t0)
		slices.Sort(lat)
		s := sample{rate: window / el.Seconds(), p99: ms(lat[window*99/100]), cpu: ms(testenv.CPUTime()-cpu0) / window}
		samples = append(samples, s)
		b.Logf("appends %6d: %6.0f/s p99 %6.1f ms cpu %.3f ms/append rss %d MB", done+window, s.rate, s.p99, s.cpu, procStatus(b, "VmRSS")>>20)
	}
	b.StopTimer()
	td.waitIndexed(b)
	rss := procStatus(b, "VmRSS")
	logHeap(b, "under appends")
	writeHeapProfile(b, "")
	text := memoryText(b, filepath.Join(dirs.ReposDir, "bot.git"))
	td.stop()
	debug.FreeOSMemory()
	again := startDaemon(b, dirs)
	again.waitIndexed(b)
	b.ReportMetric(float64(procStatus(b, "VmRSS")>>20), "restart-rss-MB")
	debug.FreeOSMemory()
	logHeap(b, "after a restart")
	writeHeapProfile(b, ".restart")
	b.ReportMetric(float64(procStatus(b, "VmRSS")>>20), "restart-min-rss-MB")
	again.stop()
	b.ReportMetric(float64(restartedProcessRSS(b, dirs.ReposDir, dirs.CacheDir)>>20), "restart-proc-rss-MB")
	first, last := samples[0], samples[len(samples)-1]
	b.ReportMetric(first.rate, "first-appends/s")
	b.ReportMetric(last.rate, "last-appends/s")
	b.ReportMetric(first.p99, "first-p99-ms")
	b.ReportMetric(last.p99, "last-p99-ms")
	b.ReportMetric(last.cpu, "last-cpu-ms/append")
	b.ReportMetric(float64(rss>>20), "rss-MB")
	b.ReportMetric(float64(text)/(1<<20), "text-MB")
}

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
