//go:build unix

package gitsync

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// BenchmarkCommitAppend commits appends to the daily logs of 1,000 users
// in turn, each log starting at 40 lines, and reports the process's CPU
// (user and system) and the pack bytes written per commit: the daemon's
// commit of a memory append without the daemon around it. Every 200
// commits the packs are rolled up, as the daemon's maintenance does,
// outside the time and CPU measured.
func BenchmarkCommitAppend(b *testing.B) {
	const users = 1000
	dir := newBare(b)
	r, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	agent := object.Signature{Name: "Ada", Email: "ada@agents.invalid"}
	logs := make([]string, users)
	var first []FileWrite
	for u := range users {
		logs[u] = "# 2026-11-26\n" + strings.Repeat(fmt.Sprintf("- user %d remembered a thing worth keeping\n", u), 40)
		first = append(first, FileWrite{Path: fmt.Sprintf("users/u%04d/memory/2026-11-26.md", u), Content: []byte(logs[u])})
	}
	if _, err := r.Commit(context.Background(), CommitRequest{Ref: "main", Writes: first, Author: agent}); err != nil {
		b.Fatal(err)
	}
	packDir := filepath.Join(dir, "objects", "pack")
	var written int64
	var cpu time.Duration
	before, cpu0 := packBytes(b, packDir), processCPU(b)
	i := 0
	for b.Loop() {
		if i > 0 && i%200 == 0 {
			b.StopTimer()
			cpu += processCPU(b) - cpu0
			written += packBytes(b, packDir) - before
			if err := r.RollUp(context.Background()); err != nil {
				b.Fatal(err)
			}
			before, cpu0 = packBytes(b, packDir), processCPU(b)
			b.StartTimer()
		}
		u := i % users
		i++
		logs[u] += fmt.Sprintf("- %d: the agent noted something about the user's plans\n", i)
		w := FileWrite{Path: fmt.Sprintf("users/u%04d/memory/2026-11-26.md", u), Content: []byte(logs[u])}
		if _, err := r.Commit(context.Background(), CommitRequest{Ref: "main", Writes: []FileWrite{w}, Author: agent}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	cpu += processCPU(b) - cpu0
	written += packBytes(b, packDir) - before
	b.ReportMetric(float64(cpu)/float64(time.Microsecond)/float64(i), "cpu-µs/op")
	b.ReportMetric(float64(written)/float64(i), "pack-B/op")
}

// processCPU is the user and system CPU time the process used so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// packBytes is the size of the pack files in dir.
func packBytes(b *testing.B, dir string) int64 {
	ms, err := filepath.Glob(filepath.Join(dir, "*.pack"))
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for _, m := range ms {
		st, err := os.Stat(m)
		if err != nil {
			b.Fatal(err)
		}
		n += st.Size()
	}
	return n
}
