package memory

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkWordVectorsLoad loads a GloVe-sized file (341,000 words × 100
// dimensions, ~300 MB of text, written once to a temporary directory) from
// the text and then from the compact cache, and reports the heap the
// loaded vectors keep and the process's peak RSS (VmHWM).
//
//	go test -run '^$' -bench WordVectorsLoad -benchtime 1x ./memory
func BenchmarkWordVectorsLoad(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "glove.txt")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rnd := uint64(7)
	for i := 0; i < 341_000; i++ {
		fmt.Fprintf(w, "w%d", i)
		for d := 0; d < 100; d++ {
			rnd = rnd*6364136223846793005 + 1442695040888963407
			w.WriteByte(' ')
			w.WriteString(strconv.FormatFloat(float64(int64(rnd>>40)%20000-10000)/10000, 'f', 6, 64))
		}
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	cache := filepath.Join(dir, "cache")
	for _, step := range []string{"text", "cached"} {
		b.Run(step, func(b *testing.B) {
			var wv *WordVectors
			for b.Loop() {
				wv = nil
				runtime.GC()
				if wv, err = OpenWordVectorsCached(path, cache); err != nil {
					b.Fatal(err)
				}
			}
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "heap-MB")
			b.ReportMetric(peakRSS()/(1<<20), "peak-RSS-MB")
			runtime.KeepAlive(wv)
		})
	}
}

// peakRSS returns the process's VmHWM in bytes (0 where /proc is absent).
func peakRSS() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			return kb * 1024
		}
	}
	return 0
}
