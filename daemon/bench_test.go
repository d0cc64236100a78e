package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/memstore"
)

// BenchmarkPushToServed measures a one-file push with the git CLI until
// the new content is served over the socket: push-ms is the whole `git
// push`, after-push-ms what is left once it returns (the target is
// ≤ 300 ms).
func BenchmarkPushToServed(b *testing.B) {
	ctx := context.Background()
	td := startDaemon(b, daemon.Options{})
	wt := newWorkTree(b, copyTree(b, filepath.Join("..", "examples", "agents")))
	td.push(b, wt, "agents")
	var push, after time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		marker := fmt.Sprintf("BENCH-MARKER-%d", i)
		writeFiles(b, wt, map[string]string{"studybuddy/AGENTS.md": "# Agents\n\n" + marker + "\n"})
		git(b, wt, "commit", "-qam", marker)
		start := time.Now()
		td.push(b, wt, "agents")
		pushed := time.Now()
		for {
			p, err := td.c.Prompt(ctx, "studybuddy", api.PromptRequest{User: "alice"})
			if err != nil {
				b.Fatal(err)
			}
			if strings.Contains(p.Prompt, marker) {
				break
			}
			time.Sleep(time.Millisecond)
		}
		push += pushed.Sub(start)
		after += time.Since(pushed)
	}
	b.ReportMetric(float64(push.Milliseconds())/float64(b.N), "push-ms")
	b.ReportMetric(float64(after.Microseconds())/1000/float64(b.N), "after-push-ms")
}

// BenchmarkPromptSocket64 sends prompt requests over the socket from 64
// concurrent clients and reports throughput and the 99th percentile
// latency (targets: ≥ 5,000 req/s, p99 ≤ 5 ms).
func BenchmarkPromptSocket64(b *testing.B) {
	ctx := context.Background()
	td := startDaemon(b, daemon.Options{})
	wt := newWorkTree(b, copyTree(b, filepath.Join("..", "examples", "agents")))
	td.push(b, wt, "agents")
	users := []string{"ines.carvalho", "tg-5512093311"}
	for _, u := range users { // seed and warm the caches
		if _, err := td.c.Prompt(ctx, "concierge", api.PromptRequest{User: u}); err != nil {
			b.Fatal(err)
		}
	}
	const clients = 64
	// The clients read each answer whole but do not decode it: the
	// benchmark measures the daemon, not the JSON decoder of a client
	// that shares its two cores.
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", td.c.Socket)
	}}}
	bodies := make([][]byte, len(users))
	for i, u := range users {
		bodies[i], _ = json.Marshal(api.PromptRequest{User: u})
	}
	var mu sync.Mutex
	lat := make([]time.Duration, 0, b.N)
	b.SetParallelism((clients + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		local := make([]time.Duration, 0, 1024)
		i := 0
		for pb.Next() {
			t0 := time.Now()
			resp, err := hc.Post("http://quire/v1/agents/concierge/prompt", "application/json", bytes.NewReader(bodies[i%len(bodies)]))
			if err != nil {
				b.Error(err)
				return
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || n < 1000 {
				b.Errorf("prompt: %d, %d bytes", resp.StatusCode, n)
				return
			}
			local = append(local, time.Since(t0))
			i++
		}
		mu.Lock()
		lat = append(lat, local...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	}
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "req/s")
}

// BenchmarkMemorySearchOverhead compares a memory search over the socket
// with the same search on the store directly (target: ≤ 1 ms added).
func BenchmarkMemorySearchOverhead(b *testing.B) {
	ctx := context.Background()
	store, err := memstore.New(memstore.Options{Embedder: memory.Builtin{}})
	if err != nil {
		b.Fatal(err)
	}
	td := startDaemon(b, daemon.Options{Store: store})
	wt := newWorkTree(b, copyTree(b, filepath.Join("..", "examples", "agents")))
	td.push(b, wt, "agents")
	q := memory.Query{Text: "printer out of toner on the second floor", User: "ines.carvalho"}
	waitFor(b, "the index", func() bool {
		st, _ := td.c.Status(ctx)
		return len(st.Agents) == 2 && st.Agents[0].Indexed == st.Agents[0].Deployed
	})
	b.Run("store", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := store.Search(ctx, "concierge", q); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("socket", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := td.c.MemorySearch(ctx, "concierge", api.SearchRequest{Query: q.Text, User: q.User}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
