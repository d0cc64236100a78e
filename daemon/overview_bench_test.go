package daemon_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/console"
)

// agentsWorkspace is a workspace of n agents, each in a directory of
// its own with the persona files of bot.
func agentsWorkspace(n int) map[string]string {
	files := map[string]string{}
	for i := range n {
		dir := fmt.Sprintf("a%04d/", i)
		for k, v := range botFiles {
			files[dir+k] = v
		}
		files[dir+"agent.yaml"] = fmt.Sprintf("name: a%04d\ntype: predefined\n", i)
	}
	return files
}

// BenchmarkConsolePages1000Agents: the requests behind each console
// page, with a session, at 1,000 deployed agents, over loopback TCP (the
// whole request: routing, the session, the answer and its JSON). The
// overview's first request assembles every agent's prompt once for its
// budget (first-ms); later ones read the deployment's cached numbers.
func BenchmarkConsolePages1000Agents(b *testing.B) {
	td := startConsoleB(b)
	td.push(b, newWorkTree(b, agentsWorkspace(1000)), "fleet")
	hc, csrf := newBrowserB(b, "http://"+td.d.APIAddr())
	get := func(b *testing.B, method, path, body string) int {
		req, _ := http.NewRequest(method, "http://"+td.d.APIAddr()+path, strings.NewReader(body))
		req.Header.Set(console.CSRFHeader, csrf)
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("%s %s: %d", method, path, resp.StatusCode)
		}
		return int(n)
	}
	start := time.Now()
	size := get(b, "GET", "/ui/api/overview", "")
	first := time.Since(start)
	pages := []struct{ name, method, path, body string }{
		{"overview", "GET", "/ui/api/overview", ""},
		{"status", "GET", "/v1/status", ""},
		{"agents", "GET", "/v1/agents", ""},
		{"agent-prompt", "POST", "/v1/agents/a0500/prompt", `{"user":"ines"}`},
		{"memory-file", "GET", "/v1/agents/a0500/files/MEMORY.md", ""},
		{"memory-history", "GET", "/v1/agents/a0500/history", ""},
		{"proposals", "GET", "/v1/agents/a0500/proposals", ""},
		{"deploys", "GET", "/v1/agents/a0500/deploys", ""},
		{"skills", "GET", "/v1/agents/a0500/skills?all=true", ""},
	}
	run := func(p struct{ name, method, path, body string }) {
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				get(b, p.method, p.path, p.body)
			}
			if p.name == "overview" {
				b.ReportMetric(float64(first.Microseconds())/1000, "first-ms")
				b.ReportMetric(float64(size)/1024, "answer-KiB")
			}
		})
	}
	for _, p := range pages {
		run(p)
	}
	// A busy live: 300 writes of other agents since a0500's only one,
	// which its history walks past.
	ctx := context.Background()
	if _, err := td.c.MemoryAppend(ctx, "a0500", api.AppendRequest{User: "ines", Text: "Mine."}); err != nil {
		b.Fatal(err)
	}
	for i := range 300 {
		if _, err := td.c.MemoryAppend(ctx, fmt.Sprintf("a%04d", i*3), api.AppendRequest{Text: fmt.Sprintf("Write %d.", i)}); err != nil {
			b.Fatal(err)
		}
	}
	run(struct{ name, method, path, body string }{"memory-history-busy", "GET", "/v1/agents/a0500/history?user=ines", ""})
}
