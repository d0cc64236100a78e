package mcp_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/internal/testenv"
)

// reportLatency reports the median and the 99th percentile of lat.
func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	if len(lat) == 0 {
		return
	}
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1000, "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1000, "p99-µs")
}

// BenchmarkMemorySearchMCP compares memory_search over streamable HTTP on
// the unix socket with the same search through the local API on the same
// socket (target: at most 1 ms added at the median), and measures calls a
// second with 16 sessions calling at once (target: 5,000 on two cores).
func BenchmarkMemorySearchMCP(b *testing.B) {
	ctx := context.Background()
	td := startDaemon(b, daemon.Options{})
	td.deploy(b, "agents", "concierge", testenv.ReadTree(b, filepath.Join("..", "..", "examples", "agents")))
	query := "printer out of toner on the second floor"
	user := "ines.carvalho"
	endpoint := "http://quire/mcp?agent=concierge&user=" + user
	args := map[string]any{"query": query}

	b.Run("api", func(b *testing.B) {
		lat := make([]time.Duration, 0, b.N)
		for b.Loop() {
			start := time.Now()
			if _, err := td.c.MemorySearch(ctx, "concierge", api.SearchRequest{Query: query, User: user}); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
		reportLatency(b, lat)
	})
	b.Run("mcp", func(b *testing.B) {
		cs := mustConnect(b, socketHTTP(td.socket), endpoint, nil)
		lat := make([]time.Duration, 0, b.N)
		for b.Loop() {
			start := time.Now()
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "memory_search", Arguments: args})
			if err != nil || res.IsError {
				b.Fatalf("memory_search: %v %+v", err, res)
			}
			lat = append(lat, time.Since(start))
		}
		reportLatency(b, lat)
	})
	b.Run("mcp-raw", func(b *testing.B) {
		// Plain HTTP posts, answers read but not decoded: the server's
		// part of a call, as "api" measures the API's.
		hc := socketHTTP(td.socket)
		id := rawSession(b, hc, endpoint)
		body := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"memory_search","arguments":{"query":"` + query + `"}}}`)
		lat := make([]time.Duration, 0, b.N)
		for b.Loop() {
			start := time.Now()
			rawToolCall(b, hc, endpoint, id, body)
			lat = append(lat, time.Since(start))
		}
		reportLatency(b, lat)
	})
	b.Run("api-16-clients", func(b *testing.B) {
		b.SetParallelism(8)
		start, cpu0 := time.Now(), cpuTime()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := td.c.MemorySearch(ctx, "concierge", api.SearchRequest{Query: query, User: user}); err != nil {
					b.Error(err)
					return
				}
			}
		})
		reportRate(b, start, cpu0)
	})
	b.Run("mcp-raw-16-sessions", func(b *testing.B) {
		// A load generator that does not decode: what the server costs.
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", td.socket)
		}}}
		body := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"memory_search","arguments":{"query":"` + query + `"}}}`)
		var ids []string
		for range 16 {
			ids = append(ids, rawSession(b, hc, endpoint))
		}
		var next int64
		var mu sync.Mutex
		b.SetParallelism(8)
		start, cpu0 := time.Now(), cpuTime()
		b.RunParallel(func(pb *testing.PB) {
			mu.Lock()
			id := ids[next%16]
			next++
			mu.Unlock()
			for pb.Next() {
				if !rawToolCall(b, hc, endpoint, id, body) {
					return
				}
			}
		})
		reportRate(b, start, cpu0)
	})
	b.Run("mcp-16-sessions", func(b *testing.B) {
		const sessions = 16
		hc := socketHTTP(td.socket)
		var css []*sdk.ClientSession
		for range sessions {
			css = append(css, mustConnect(b, hc, endpoint, nil))
		}
		var next int64
		var mu sync.Mutex
		b.SetParallelism((sessions + 1) / 2) // × GOMAXPROCS goroutines
		start, cpu0 := time.Now(), cpuTime()
		b.RunParallel(func(pb *testing.PB) {
			mu.Lock()
			cs := css[next%sessions]
			next++
			mu.Unlock()
			for pb.Next() {
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "memory_search", Arguments: args})
				if err != nil || res.IsError {
					b.Errorf("memory_search: %v %+v", err, res)
					return
				}
			}
		})
		reportRate(b, start, cpu0)
	})
}

// rawSession initializes a session with plain HTTP and returns its id.
func rawSession(b *testing.B, hc *http.Client, endpoint string) string {
	post := func(session, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		b.Fatalf("initialize: %d, session %q", resp.StatusCode, id)
	}
	post(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return id
}

// cpuTime is the CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportRate reports calls a second, and the CPU time a call costs (load
// generator included): on a shared machine the latter is the steadier.
func reportRate(b *testing.B, start time.Time, cpu0 time.Duration) {
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/call")
}

// rawToolCall posts a tools/call in session id and reads the answer.
func rawToolCall(b *testing.B, hc *http.Client, endpoint, id string, body []byte) bool {
	req, _ := http.NewRequest(http.MethodPost, endpoint, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	resp, err := hc.Do(req)
	if err != nil {
		b.Error(err)
		return false
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || n < 100 {
		b.Errorf("tools/call: %d, %d bytes", resp.StatusCode, n)
		return false
	}
	return true
}
