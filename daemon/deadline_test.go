package daemon_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
)

// TestHungUpstreamWritesBounded: the upstream stops answering (its TCP
// connections stay open, nothing comes back). Its status shows it within
// twice the fetch timeout, with a lag that is not zero. Writes sent then —
// eight at once, four more while those wait — are each answered within
// the write deadline and a second, counted from its own arrival: 503 when
// nothing was written, 504 outcome_unknown when a push may have landed,
// never "nothing was acknowledged". Once the upstream answers again,
// writes go through and the status clears.
func TestHungUpstreamWritesBounded(t *testing.T) {
	// Not parallel: it bounds answer times to a second past the
	// deadline, which other tests' load would stretch.
	ctx := context.Background()
	host := startDaemon(t, daemon.Options{})
	host.push(t, newWorkTree(t, botFiles), "bot")
	target, _ := url.Parse(host.remote)
	rp := httputil.NewSingleHostReverseProxy(target)
	var hang atomic.Bool
	release := make(chan struct{})
	var releaseOnce sync.Once
	unhang := func() { releaseOnce.Do(func() { hang.Store(false); close(release) }) }
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hang.Load() {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		r.Host = target.Host
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	t.Cleanup(unhang) // before the proxy closes: it waits for its requests
	const fetchTimeout, writeTimeout = 2 * time.Second, 2 * time.Second
	follower := startDaemon(t, daemon.Options{Upstream: proxy.URL + "/bot.git", Poll: 100 * time.Millisecond,
		FetchTimeout: fetchTimeout, WriteTimeout: writeTimeout})
	waitFor(t, "the follower to deploy", func() bool { _, err := follower.c.Prompt(ctx, "bot", api.PromptRequest{}); return err == nil })
	if _, err := follower.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: "before the hang"}); err != nil {
		t.Fatal(err)
	}

	hang.Store(true)
	hungAt := time.Now()
	// The status, from the fetches alone.
	var st api.AgentStatus
	for {
		s, err := follower.c.Status(ctx)
		if err == nil && len(s.Agents) > 0 && strings.Contains(s.Agents[0].LastError, "upstream:") && s.Agents[0].LagSeconds > 0 {
			st = s.Agents[0]
			break
		}
		if time.Since(hungAt) > 2*fetchTimeout {
			t.Fatalf("the status does not show the stuck upstream %s after it hung: %+v", 2*fetchTimeout, s.Agents)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("status after %s: lag %.1fs, %s", time.Since(hungAt).Round(time.Millisecond), st.LagSeconds, st.LastError)

	type answer struct {
		took time.Duration
		err  error
	}
	var mu sync.Mutex
	var answers []answer
	var wg sync.WaitGroup
	send := func(n, from int) {
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				start := time.Now()
				_, err := follower.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: fmt.Sprintf("during the hang %d", from+i)})
				mu.Lock()
				answers = append(answers, answer{time.Since(start), err})
				mu.Unlock()
			}()
		}
	}
	send(8, 0)
	time.Sleep(time.Second)
	send(4, 8)
	wg.Wait()
	codes := map[api.Code]int{}
	for _, a := range answers {
		e := api.AsError(a.err)
		if a.err == nil {
			t.Errorf("a write was acknowledged while the upstream hung")
			continue
		}
		codes[e.Code]++
		if a.took > writeTimeout+time.Second {
			t.Errorf("answered after %s, past the deadline of %s and a second: %v", a.took.Round(time.Millisecond), writeTimeout, a.err)
		}
		switch {
		case e.Code == api.CodeOutcomeUnknown && e.Status == http.StatusGatewayTimeout && strings.Contains(e.Message, "retry with the same Idempotency-Key"):
		case (e.Code == api.CodeUpstreamUnavailable || e.Code == api.CodeWriteTimeout) && e.Status == http.StatusServiceUnavailable &&
			strings.Contains(e.Message, "nothing was written"):
		default:
			t.Errorf("answer %d %v, want 503 nothing was written or 504 outcome_unknown", e.Status, a.err)
		}
		if strings.Contains(e.Message, "nothing was acknowledged") {
			t.Errorf("answer says nothing was acknowledged: %v", a.err)
		}
	}
	t.Logf("answers while hung: %v", codes)

	unhang()
	waitFor(t, "a write to go through again", func() bool {
		_, err := follower.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: "after the hang"})
		return err == nil
	})
	waitFor(t, "the status to clear", func() bool {
		s, err := follower.c.Status(ctx)
		return err == nil && len(s.Agents) > 0 && s.Agents[0].LastError == "" && s.Agents[0].LagSeconds == 0
	})
}
