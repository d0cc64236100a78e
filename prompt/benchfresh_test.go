//go:build linux

package prompt

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// freshPromptEnv makes TestFreshProcessPrompt run: it is the child
// BenchmarkAssembleFreshProcess starts.
const freshPromptEnv = "QUIRE_FRESH_PROMPT"

// BenchmarkAssembleFreshProcess is the first prompt of a new process, as
// `quire prompt` makes it: BenchmarkAssembleColdTokenize, but nothing has
// run before it, so the embedded vocabulary's pages are mapped on first
// use (page faults) and the heap, the code and the tables are cold. Each
// iteration starts a process; it reports that process's CPU time and
// minor page faults for its first Open and Assemble.
func BenchmarkAssembleFreshProcess(b *testing.B) {
	var cpu time.Duration
	var faults int64
	for b.Loop() {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFreshProcessPrompt$", "-test.count=1")
		cmd.Env = append(os.Environ(), freshPromptEnv+"=1")
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		var ns, flt int64
		i := bytes.Index(out, []byte("first prompt:"))
		if i < 0 {
			b.Fatalf("no measurement in %q", out)
		}
		if _, err := fmt.Sscanf(string(out[i:]), "first prompt: %d ns %d faults", &ns, &flt); err != nil {
			b.Fatalf("%v in %q", err, out)
		}
		cpu += time.Duration(ns)
		faults += flt
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(faults)/float64(b.N), "minflt/op")
}

// TestFreshProcessPrompt measures the first prompt of its process for
// BenchmarkAssembleFreshProcess; on its own it does nothing.
func TestFreshProcessPrompt(t *testing.T) {
	if os.Getenv(freshPromptEnv) == "" {
		t.Skip("run by BenchmarkAssembleFreshProcess")
	}
	fsys := memExamples(t)
	req := benchRequest()
	before := rusage(t)
	w, err := Open(fsys, Options{Tokenizer: NewTokenizer()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Assemble(req); err != nil {
		t.Fatal(err)
	}
	after := rusage(t)
	cpu := after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano()
	fmt.Printf("first prompt: %d ns %d faults\n", cpu, after.Minflt-before.Minflt)
}

func rusage(t *testing.T) syscall.Rusage {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return ru
}
