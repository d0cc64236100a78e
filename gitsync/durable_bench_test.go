package gitsync

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// BenchmarkAppend measures one commit (an append to a memory file) while
// the repository is idle, while git clones it over and over (36 MB of
// incompressible files), and while it is repacked over and over. The
// issue's bound: both within 2x idle.
func BenchmarkAppend(b *testing.B) {
	h, url, dir := testHost(b, HostOptions{})
	src := b.TempDir()
	git(b, src, "init", "-q", "-b", "main")
	for i := range 36 {
		f, err := os.Create(filepath.Join(src, fmt.Sprintf("big-%02d.bin", i)))
		if err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command("head", "-c", strconv.Itoa(1<<20), "/dev/urandom")
		cmd.Stdout = f
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	git(b, src, "add", "-A")
	git(b, src, "commit", "-q", "-m", "big")
	// Files of 1 MiB each are at the file limit: allowed.
	git(b, src, "push", "-q", url+"/ws.git", "main")
	r, err := h.Repository("ws")
	if err != nil {
		b.Fatal(err)
	}
	agent := object.Signature{Name: "Ada", Email: "ada@agents.invalid"}
	n := 0
	appendOne := func(b *testing.B) {
		n++
		if _, err := r.Commit(context.Background(), CommitRequest{Ref: "main", Author: agent,
			Writes: []FileWrite{{Path: fmt.Sprintf("memory/%d.md", n%100), Content: []byte(fmt.Sprintf("entry %d\n", n))}}}); err != nil {
			b.Fatal(err)
		}
	}
	background := func(b *testing.B, work func() error) func() {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var runs int
		going := make(chan struct{})
		wg.Go(func() {
			got := sync.OnceFunc(func() { close(going) })
			defer got()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := work(); err != nil {
					b.Error(err)
					return
				}
				runs++
				got()
			}
		})
		<-going // it got going: one run is done
		return func() {
			close(stop)
			wg.Wait()
			b.ReportMetric(float64(runs), "background-runs")
		}
	}
	b.Run("idle", func(b *testing.B) {
		for b.Loop() {
			appendOne(b)
		}
	})
	b.Run("during-clone", func(b *testing.B) {
		// The server's side of a clone; the pack is read and dropped
		// (a client on another machine), so that the disk only sees
		// the daemon's own writes.
		done := background(b, func() error {
			head := git(b, dir, "--git-dir", filepath.Join(dir, "ws.git"), "rev-parse", "main")
			body := appendPkt(nil, "want "+head+" ofs-delta side-band-64k no-progress\n")
			body = append(body, "0000"...)
			body = appendPkt(body, "done\n")
			resp, err := http.Post(url+"/ws.git/git-upload-pack", "application/x-git-upload-pack-request", bytes.NewReader(body))
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			n, err := io.Copy(io.Discard, resp.Body)
			if err == nil && n < 36<<20 {
				err = fmt.Errorf("the clone sent %d bytes", n)
			}
			return err
		})
		for b.Loop() {
			appendOne(b)
		}
		done()
	})
	b.Run("during-repack", func(b *testing.B) {
		// What Maintain runs: a geometric repack, rolling up the packs
		// the appends write.
		done := background(b, func() error { return r.Repack() })
		for b.Loop() {
			appendOne(b)
		}
		done()
	})
	b.Run("during-full-repack", func(b *testing.B) {
		done := background(b, func() error {
			// -a -d -f: a full repack, rewriting the 36 MB each time.
			cmd := exec.Command("git", "repack", "-a", "-d", "-q", "-f")
			cmd.Dir = filepath.Join(dir, "ws.git")
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("repack: %v: %s", err, out)
			}
			return nil
		})
		for b.Loop() {
			appendOne(b)
		}
		done()
	})
	git(b, filepath.Join(dir, "ws.git"), "fsck", "--strict", "--no-dangling")
}

// BenchmarkRefusedPush measures the memory of the daemon's side of a
// refused 200 MB push (one incompressible 200 MB file, over the file
// limit): peak-rss-MB is the process's peak resident set during the push
// (VmHWM after resetting it), peak-heap-MB the Go heap's. The issue's
// bound: 64 MB.
func BenchmarkRefusedPush(b *testing.B) {
	var logs syncBuffer
	_, url, dir := testHost(b, HostOptions{Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	src := newWorkRepo(b, map[string]string{"AGENTS.md": "a\n"})
	git(b, src, "push", "-q", url+"/ws.git", "main")
	f, err := os.Create(filepath.Join(src, "huge.bin"))
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command("head", "-c", strconv.Itoa(200<<20), "/dev/urandom")
	cmd.Stdout = f
	if err := cmd.Run(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	git(b, src, "add", "-A")
	git(b, src, "commit", "-q", "-m", "huge")
	base := git(b, filepath.Join(dir, "ws.git"), "rev-parse", "main")
	var peakRSS, peakHeap float64
	for b.Loop() {
		runtime.GC()
		resetPeakRSS()
		stop := make(chan struct{})
		var heap uint64
		var wg sync.WaitGroup
		wg.Go(func() {
			var ms runtime.MemStats
			for {
				runtime.ReadMemStats(&ms)
				heap = max(heap, ms.HeapInuse)
				select {
				case <-stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
			}
		})
		out, err := gitTry(src, "push", url+"/ws.git", "main")
		close(stop)
		wg.Wait()
		if err == nil || !strings.Contains(out, "huge.bin") {
			b.Fatalf("the 200 MB push was not refused naming the file: %v\n%s", err, out)
		}
		peakRSS = max(peakRSS, float64(readPeakRSS())/(1<<20))
		peakHeap = max(peakHeap, float64(heap)/(1<<20))
	}
	if got := git(b, filepath.Join(dir, "ws.git"), "rev-parse", "main"); got != base {
		b.Fatalf("main moved")
	}
	b.ReportMetric(peakRSS, "peak-rss-MB")
	b.ReportMetric(peakHeap, "peak-heap-MB")
	// git index-pack's own peak (a child process).
	var indexRSS float64
	for line := range strings.Lines(logs.String()) {
		var rec struct {
			RSS int64 `json:"index_pack_peak_rss"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil {
			indexRSS = max(indexRSS, float64(rec.RSS)/(1<<20))
		}
	}
	b.ReportMetric(indexRSS, "index-pack-rss-MB")
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// resetPeakRSS resets the process's VmHWM (Linux).
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// readPeakRSS is VmHWM in bytes (0 when unknown).
func readPeakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(b) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			f := strings.Fields(string(rest))
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}
