package prompt

import (
	"fmt"
	"io/fs"
	"os"
	"testing"
	"testing/fstest"

	"github.com/quirehq/quire/internal/testenv"
	"github.com/quirehq/quire/prompt/prompttest"
	"github.com/quirehq/quire/workspace"
)

// benchRequest is the request of the benchmark: the example
// concierge (a 25,000-char SOUL.md), 15 tools and 20 skills.
func benchRequest() Request {
	tools := make([]Tool, 15)
	for i := range tools {
		tools[i] = Tool{Name: fmt.Sprintf("tool_%02d", i), Description: "Does one well-defined thing with the workspace and reports what it did."}
	}
	skills := make([]Skill, 20)
	for i := range skills {
		skills[i] = Skill{Name: fmt.Sprintf("skill-%02d", i), Description: "Use when the guest asks about something this skill covers in detail.", Location: fmt.Sprintf("/srv/quire/concierge/skills/skill-%02d/SKILL.md", i)}
	}
	return Request{Agent: "concierge", User: "ines.carvalho", Now: noon, Tools: tools, Skills: skills}
}

// memExamples copies the example workspace into memory, so benchmarks
// measure Quire and not the disk.
func memExamples(b testing.TB) fstest.MapFS {
	m := fstest.MapFS{}
	src := os.DirFS("../examples")
	err := fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(src, p)
		m[p] = &fstest.MapFile{Data: data}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// benchPrepared runs requests against a workspace that has served
// benchRequest once; forget, when set, drops caches before each request.
func benchPrepared(b *testing.B, next func(i int) Request, forget func(w *Workspace)) {
	w, err := Open(memExamples(b), Options{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := w.Assemble(benchRequest()); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b)()
	i := 0
	for b.Loop() {
		if forget != nil {
			w.mu.Lock()
			forget(w)
			w.mu.Unlock()
		}
		if _, err := w.Assemble(next(i)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkAssemble is a request against a prepared workspace: files read,
// budgeted, tokenised and rendered by an earlier identical request, as when
// a chat back-end asks the daemon for the same prompt again.
func BenchmarkAssemble(b *testing.B) {
	req := benchRequest()
	benchPrepared(b, func(int) Request { return req }, nil)
}

// BenchmarkAssembleRender is a prepared workspace asked for prompts it
// has not rendered yet: the plan is cached, the sections are written anew.
func BenchmarkAssembleRender(b *testing.B) {
	reqs := make([]Request, 4*maxRendersPerPlan)
	for i := range reqs {
		reqs[i] = benchRequest()
		reqs[i].Model = fmt.Sprintf("model-%02d", i)
	}
	benchPrepared(b, func(i int) Request { return reqs[i%len(reqs)] }, nil)
}

// BenchmarkAssembleBudget is a request whose files are loaded (read and
// counted) but whose budgets were never applied: truncation, clamping,
// token lookups, the report and rendering, as when GoClaw builds a prompt
// from context files it holds in memory.
func BenchmarkAssembleBudget(b *testing.B) {
	req := benchRequest()
	benchPrepared(b, func(int) Request { return req }, func(w *Workspace) { clear(w.plans); clear(w.shared) })
}

// BenchmarkAssembleUncached is a first request to an opened workspace:
// every context file is read, counted, truncated and clamped, and the
// prompt rendered (agent discovery and agent.yaml are already done).
func BenchmarkAssembleUncached(b *testing.B) {
	req := benchRequest()
	benchPrepared(b, func(int) Request { return req }, func(w *Workspace) { clear(w.plans); clear(w.shared); clear(w.files) })
}

// BenchmarkAssembleCold opens the workspace anew for every request: agent
// discovery, reading, counting chars, truncating and clamping. Token counts
// and parsed agent.yaml files come from a warm Tokenizer, as when the daemon
// deploys a new commit or the language server takes a new snapshot.
func BenchmarkAssembleCold(b *testing.B) {
	fsys := memExamples(b)
	cache := NewTokenizer()
	req := benchRequest()
	w, _ := Open(fsys, Options{Tokenizer: cache})
	if _, err := w.Assemble(req); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b)()
	for b.Loop() {
		w, err := Open(fsys, Options{Tokenizer: cache})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := w.Assemble(req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAssembleColdTokenize is a first request ever: also tokenising
// every file with o200k_base, with a Tokenizer (and so a piece cache) of
// its own. The vocabulary's pages are touched before, by another one.
func BenchmarkAssembleColdTokenize(b *testing.B) {
	fsys := memExamples(b)
	req := benchRequest()
	NewTokenizer().Count("touch the vocabulary")
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b)()
	for b.Loop() {
		c := NewTokenizer()
		w, err := Open(fsys, Options{Tokenizer: c})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := w.Assemble(req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTruncate25k(b *testing.B) {
	data, err := os.ReadFile("../examples/agents/concierge/SOUL.md")
	if err != nil {
		b.Fatal(err)
	}
	s := string(data)
	b.ReportAllocs()
	for b.Loop() {
		Truncate("SOUL.md", s, 20000, 0.7, 0.2)
	}
}

// BenchmarkAssembleColdDisk opens the generated workspace from disk for
// every request (discovery, reading, budgets, rendering), with 15 tools and
// 20 skills handed in by the caller; token counts come from a warm Tokenizer,
// as in the daemon and the language server. It reads through os.DirFS and
// through workspace.Dir, which the CLI, the language server and the
// daemon's --dir source use. The skills package's BenchmarkColdPromptDisk
// adds loading the 20 skills from disk.
func BenchmarkAssembleColdDisk(b *testing.B) {
	dir := b.TempDir()
	prompttest.Workspace(b, dir)
	for _, c := range []struct {
		name string
		fsys fs.FS
	}{{"os.DirFS", os.DirFS(dir)}, {"workspace.Dir", workspace.DirFS(dir)}} {
		b.Run(c.name, func(b *testing.B) {
			cache := NewTokenizer()
			req := benchRequest()
			req.Agent = ""
			w, err := Open(c.fsys, Options{Tokenizer: cache})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := w.Assemble(req); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			defer reportCPU(b)()
			for b.Loop() {
				w, err := Open(c.fsys, Options{Tokenizer: cache})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := w.Assemble(req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAssembleNewUser is the first prompt of a user the prepared
// workspace has never seen: their files are looked up (and found missing),
// the budgets applied and the prompt rendered.
func BenchmarkAssembleNewUser(b *testing.B) {
	users := make([]string, 1<<17)
	for i := range users {
		users[i] = fmt.Sprintf("guest-%06d", i)
	}
	req := benchRequest()
	benchPrepared(b, func(i int) Request {
		req.User = users[i%len(users)]
		return req
	}, nil)
}

// reportCPU adds the process's CPU time per operation (user + system, all
// threads) as cpu-ns/op: on a machine shared with other work, wall time
// per operation also counts the time spent waiting for a core. Call it
// after ResetTimer; the returned function reports.
func reportCPU(b *testing.B) func() {
	start := testenv.CPUTime()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64((testenv.CPUTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
		}
	}
}
