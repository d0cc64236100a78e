package daemon_test

import (
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"
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

// BenchmarkOverview1000Agents: GET /ui/api/overview with a session, at
// 1,000 deployed agents, over loopback TCP (the whole request: routing,
// the session, the overview and its JSON). The first request assembles
// every agent's prompt once for its budget (reported as first-ms); later
// ones read the deployment's cached numbers.
func BenchmarkOverview1000Agents(b *testing.B) {
	td := startConsoleB(b)
	wt := newWorkTree(b, agentsWorkspace(1000))
	td.push(b, wt, "fleet")
	jar := newBrowserB(b, "http://"+td.d.APIAddr())
	get := func() int {
		resp, err := jar.Get("http://" + td.d.APIAddr() + "/ui/api/overview")
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("overview: %d", resp.StatusCode)
		}
		return int(n)
	}
	start := time.Now()
	size := get()
	first := time.Since(start)
	for b.Loop() {
		get()
	}
	// After the loop: b.Loop's timer reset drops metrics reported before.
	b.ReportMetric(float64(first.Microseconds())/1000, "first-ms")
	b.ReportMetric(float64(size)/1024, "answer-KiB")
}
