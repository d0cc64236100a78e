package daemon_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/internal/testenv"
)

// pct reports the p50 and p99 of ds in milliseconds.
func pct(b *testing.B, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(ds[len(ds)/2]), "p50-ms")
	b.ReportMetric(ms(ds[len(ds)*99/100]), "p99-ms")
}

// BenchmarkAppendAt200PerSecond: memory appends with --repos, paced at 200
// a second (one every 5 ms, each on its own goroutine), latency until
// acknowledged. Target: p50 ≤ 5 ms, p99 ≤ 20 ms.
func BenchmarkAppendAt200PerSecond(b *testing.B) {
	ctx := context.Background()
	td := startDaemon(b, daemon.Options{})
	td.push(b, newWorkTree(b, botFiles), "bot")
	var mu sync.Mutex
	var ds []time.Duration
	var wg sync.WaitGroup
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	b.ResetTimer()
	for i := range b.N {
		<-tick.C
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			if _, err := td.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: fmt.Sprintf("entry %d", i)}); err != nil {
				b.Error(err)
				return
			}
			mu.Lock()
			ds = append(ds, time.Since(start))
			mu.Unlock()
		}()
	}
	wg.Wait()
	b.StopTimer()
	pct(b, ds)
}

// BenchmarkAppendThroughUpstream: three daemons (a --repos host and two
// --upstream followers of it on loopback), clients on all three appending
// as fast as they are acknowledged; reports acknowledged appends a second
// across the three, and how long until a write on a follower is served by
// the other follower (p99). Targets: ≥ 500/s, p99 ≤ 1 s. Group commit is
// what makes the rate: the writes waiting while a follower pushes become
// its next push, so the rate grows with the clients a daemon has (4 and
// 32 each here; a chat back-end's users are many more).
func BenchmarkAppendThroughUpstream(b *testing.B) {
	for _, clients := range []int{4, 32, 64} {
		b.Run(fmt.Sprintf("clients-%d-each", clients), func(b *testing.B) { benchAppendThroughUpstream(b, clients) })
	}
}

func benchAppendThroughUpstream(b *testing.B, clients int) {
	ctx := context.Background()
	host := startDaemon(b, daemon.Options{})
	host.push(b, newWorkTree(b, botFiles), "bot")
	var ds []*testDaemon
	ds = append(ds, host)
	for range 2 {
		f := startDaemon(b, daemon.Options{Upstream: host.remote + "/bot.git", Poll: 200 * time.Millisecond})
		waitFor(b, "a follower to deploy", func() bool { _, err := f.c.Prompt(ctx, "bot", api.PromptRequest{}); return err == nil })
		ds = append(ds, f)
	}
	var n atomic.Int64
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	per := max(1, b.N/(3*clients))
	var took [3]time.Duration // until each daemon's last client was done
	var mu sync.Mutex
	for di, td := range ds {
		for c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range per {
					if _, err := td.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: fmt.Sprintf("e-%d-%d-%d", di, c, i)}); err != nil {
						b.Error(err)
						return
					}
					n.Add(1)
				}
				mu.Lock()
				took[di] = max(took[di], time.Since(start))
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	el := time.Since(start)
	b.StopTimer()
	// Every daemon's clients append as many: the rate across the three
	// is the total over the time until the slowest was done; each
	// daemon's own rate is its appends over its own time.
	b.ReportMetric(float64(n.Load())/el.Seconds(), "appends/s")
	b.ReportMetric(float64(per*clients)/took[0].Seconds(), "host-appends/s")
	b.ReportMetric(float64(per*clients)/max(took[1], took[2]).Seconds(), "follower-appends/s")
	// A write on a follower, served by the other follower (its next
	// fetch, told by the host's push... or its poll).
	var served []time.Duration
	for i := range 20 {
		t0 := time.Now()
		w, err := ds[1].c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: fmt.Sprintf("probe-%d", i)})
		if err != nil {
			b.Fatal(err)
		}
		waitFor(b, "the other follower to serve the write", func() bool {
			p, err := ds[2].c.Prompt(ctx, "bot", api.PromptRequest{})
			return err == nil && p.Commit == w.Commit
		})
		served = append(served, time.Since(t0))
	}
	slices.Sort(served)
	b.ReportMetric(float64(served[len(served)*99/100])/float64(time.Millisecond), "served-elsewhere-p99-ms")
}

// BenchmarkAppendSerial: one client appending with --repos, each append
// waiting for the previous one's acknowledgement: the cost of one write.
func BenchmarkAppendSerial(b *testing.B) {
	ctx := context.Background()
	td := startDaemon(b, daemon.Options{})
	td.push(b, newWorkTree(b, botFiles), "bot")
	var ds []time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		if _, err := td.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: fmt.Sprintf("entry %d", i)}); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(start))
	}
	b.StopTimer()
	pct(b, ds)
}

// BenchmarkFollowersUnderBusyHost: a --repos host kept busy by 11 mixed
// clients (appends, prompts, If-Match file writes, searches) and a
// person's push to main every 10 s, and two --upstream followers with
// 4 clients each appending as fast as they are acknowledged. Reports,
// per follower, acknowledged appends a second, the p99 latency and the
// failures; fairness is the lower follower's rate over the higher one's
// (the target: at least 0.5). The window is 30 s (QUIRE_BENCH_SECONDS
// changes it); run with -benchtime=1x.
func BenchmarkFollowersUnderBusyHost(b *testing.B) {
	ctx := context.Background()
	window := 30 * time.Second
	if s := os.Getenv("QUIRE_BENCH_SECONDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatalf("QUIRE_BENCH_SECONDS: %v", err)
		}
		window = time.Duration(n) * time.Second
	}
	host := startDaemon(b, daemon.Options{})
	wt := newWorkTree(b, botFiles)
	host.push(b, wt, "bot")
	var followers []*testDaemon
	for range 2 {
		f := startDaemon(b, daemon.Options{Upstream: host.remote + "/bot.git", Poll: time.Second})
		waitFor(b, "a follower to deploy", func() bool { _, err := f.c.Prompt(ctx, "bot", api.PromptRequest{}); return err == nil })
		followers = append(followers, f)
	}
	wctx, cancel := context.WithTimeout(ctx, window)
	defer cancel()
	var wg sync.WaitGroup
	var hostOps, hostErrs atomic.Int64
	// The busy host: 11 clients, each going round four kinds of request.
	hostClients := 11
	if s := os.Getenv("QUIRE_BENCH_HOST_CLIENTS"); s != "" {
		hostClients, _ = strconv.Atoi(s)
	}
	for c := range hostClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; wctx.Err() == nil; i++ {
				var err error
				switch (c + i) % 4 {
				case 0:
					_, err = host.c.MemoryAppend(wctx, "bot", api.AppendRequest{Text: fmt.Sprintf("host-%d-%d", c, i)})
				case 1:
					_, err = host.c.Prompt(wctx, "bot", api.PromptRequest{User: fmt.Sprintf("u%d", c)})
				case 2:
					var f api.File
					if f, err = host.c.ReadFile(wctx, "bot", "MEMORY.md", ""); err == nil {
						_, err = host.c.WriteFile(wctx, "bot", "MEMORY.md", "", f.ETag, []byte(fmt.Sprintf("# Memory\n\nFact %d-%d.\n", c, i)))
					}
				case 3:
					_, err = host.c.MemorySearch(wctx, "bot", api.SearchRequest{Query: "wifi password"})
				}
				hostOps.Add(1)
				if err != nil && wctx.Err() == nil && apiStatus(err) != 409 {
					if hostErrs.Add(1) <= 3 {
						b.Logf("host client: %v", err)
					}
				}
			}
		}()
	}
	// A person pushes to main every 10 s.
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-wctx.Done():
				return
			case <-t.C:
			}
			testenv.WriteFiles(b, wt, map[string]string{"SOUL.md": fmt.Sprintf("# Soul\n\nCalm and exact. MARKER-ONE push %d\n", i)})
			git(b, wt, "commit", "-qam", fmt.Sprintf("soul %d", i))
			if out, err := gitMay(wt, "push", "-q", host.remote+"/bot.git", "main"); err != nil {
				b.Logf("push to main: %v\n%s", err, out)
			}
		}
	}()
	type result struct {
		mu    sync.Mutex
		lat   []time.Duration
		fails int
	}
	res := make([]*result, len(followers))
	start := time.Now()
	for fi, f := range followers {
		res[fi] = &result{}
		for c := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; wctx.Err() == nil; i++ {
					t0 := time.Now()
					_, err := f.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: fmt.Sprintf("f%d-%d-%d", fi, c, i)})
					r := res[fi]
					r.mu.Lock()
					if err != nil {
						r.fails++
					} else {
						r.lat = append(r.lat, time.Since(t0))
					}
					r.mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	el := time.Since(start)
	b.StopTimer()
	var rates []float64
	for fi, r := range res {
		rate := float64(len(r.lat)) / el.Seconds()
		rates = append(rates, rate)
		slices.Sort(r.lat)
		p99 := time.Duration(0)
		if len(r.lat) > 0 {
			p99 = r.lat[len(r.lat)*99/100]
		}
		b.ReportMetric(rate, fmt.Sprintf("f%d-appends/s", fi+1))
		b.ReportMetric(float64(p99)/float64(time.Millisecond), fmt.Sprintf("f%d-p99-ms", fi+1))
		b.ReportMetric(float64(r.fails), fmt.Sprintf("f%d-failed", fi+1))
	}
	if hi := max(rates[0], rates[1]); hi > 0 {
		b.ReportMetric(min(rates[0], rates[1])/hi, "fairness")
	}
	b.ReportMetric(float64(hostOps.Load())/el.Seconds(), "host-ops/s")
	b.ReportMetric(float64(hostErrs.Load()), "host-failed")
}
