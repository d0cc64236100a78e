package daemon_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
)

// TestDaemonFollowsDaemon: a daemon following another quire daemon
// (--repos) accepts writes; clients on both write concurrently; every
// acknowledged append is in the host's live exactly once, and both serve
// the same prompt soon after the last write.
func TestDaemonFollowsDaemon(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return day }
	host := startDaemon(t, daemon.Options{Now: now})
	host.push(t, newWorkTree(t, botFiles), "bot")
	follower := startDaemon(t, daemon.Options{Now: now, Upstream: host.remote + "/bot.git", Poll: 100 * time.Millisecond})
	waitFor(t, "the follower to deploy", func() bool { _, err := follower.c.Prompt(ctx, "bot", api.PromptRequest{}); return err == nil })

	const perDaemon, each = 4, 25
	var wg sync.WaitGroup
	var mu sync.Mutex
	acked := map[string]bool{}
	for di, td := range []*testDaemon{host, follower} {
		for c := range perDaemon {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					text := fmt.Sprintf("entry-%d-%d-%d", di, c, i)
					if _, err := td.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: text}); err != nil {
						t.Errorf("daemon %d: %v", di, err)
						continue
					}
					mu.Lock()
					acked[text] = true
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	if len(acked) != 2*perDaemon*each {
		t.Fatalf("%d appends acknowledged, want %d", len(acked), 2*perDaemon*each)
	}
	bare := filepath.Join(host.repos, "bot.git")
	log := git(t, bare, "show", "live:memory/2026-11-22.md")
	for text := range acked {
		if n := strings.Count(log, text+"\n"); n != 1 {
			t.Errorf("%s is in live %d times, want once", text, n)
		}
	}
	live := strings.TrimSpace(git(t, bare, "rev-parse", "live"))
	waitFor(t, "both daemons to serve the host's live", func() bool {
		a, err1 := host.c.Prompt(ctx, "bot", api.PromptRequest{})
		b, err2 := follower.c.Prompt(ctx, "bot", api.PromptRequest{})
		return err1 == nil && err2 == nil && a.Commit == live && b.Commit == live && a.Prompt == b.Prompt
	})
}

// TestUpstreamRefusesTenTimes: the upstream's live moves before each of
// the follower's first ten pushes (another writer got there first). An
// upstream that is any git server (GitHub, a bare repository: here the
// quire host behind a proxy that hides its quire-live capability) refuses
// each push as stale: the write is re-applied until the upstream takes
// it, acknowledged only then, and nothing is lost. A quire host merges
// the write onto the live that moved instead: one push, acknowledged with
// the merge (live as it is), nothing lost either.
func TestUpstreamRefusesTenTimes(t *testing.T) {
	t.Parallel()
	for _, plain := range []bool{true, false} {
		name := map[bool]string{true: "plain upstream", false: "quire host"}[plain]
		t.Run(name, func(t *testing.T) { testUpstreamContended(t, plain) })
	}
}

func testUpstreamContended(t *testing.T, plain bool) {
	ctx := context.Background()
	host := startDaemon(t, daemon.Options{})
	host.push(t, newWorkTree(t, botFiles), "bot")
	target, _ := url.Parse(host.remote)
	rp := httputil.NewSingleHostReverseProxy(target)
	// A plain upstream: the advertisement loses the quire-live
	// capability, so the follower pushes with a lease the git client
	// checks, instead of letting the host merge its write (see
	// gitsync.Repository.PushCAS).
	rp.ModifyResponse = func(resp *http.Response) error {
		if !plain || !strings.HasSuffix(resp.Request.URL.Path, "/info/refs") {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		body = bytes.Replace(body, []byte(" quire-live"), []byte(" plain-host"), 1) // same length: pkt-line sizes hold
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return nil
	}
	var pushes, interfered atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Host = target.Host
		// Each push starts with the receive-pack advertisement: another
		// writer moves live just before it. The follower's own question
		// whether the upstream is a quire host is not a push.
		if strings.HasSuffix(r.URL.Path, "/info/refs") && r.URL.Query().Get("service") == "git-receive-pack" &&
			r.Header.Get("User-Agent") != "git/quire" {
			if pushes.Add(1) <= 10 {
				// Another writer moves live first.
				if _, err := host.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: fmt.Sprintf("interfering-%d", interfered.Add(1))}); err != nil {
					t.Error(err)
				}
			}
		}
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	follower := startDaemon(t, daemon.Options{Upstream: proxy.URL + "/bot.git", Poll: time.Hour})
	waitFor(t, "the follower to deploy", func() bool { _, err := follower.c.Prompt(ctx, "bot", api.PromptRequest{}); return err == nil })

	w, err := follower.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: "PERSISTENT"})
	if err != nil {
		t.Fatalf("append through a contended upstream: %v", err)
	}
	want := int32(1)
	if plain {
		want = 11 // ten refused, the eleventh taken
	}
	if n := pushes.Load(); n != want {
		t.Fatalf("acknowledged after %d pushes, want %d", n, want)
	}
	bare := filepath.Join(host.repos, "bot.git")
	if live := strings.TrimSpace(git(t, bare, "rev-parse", "live")); live != w.Commit {
		t.Errorf("acknowledged %s, but the upstream's live is %s", w.Commit, live)
	}
	log := git(t, bare, "show", "live:"+w.Path)
	if strings.Count(log, "PERSISTENT\n") != 1 {
		t.Errorf("the write is in live %d times:\n%s", strings.Count(log, "PERSISTENT\n"), log)
	}
	for i := int32(1); i <= interfered.Load(); i++ {
		if !strings.Contains(log, fmt.Sprintf("interfering-%d\n", i)) {
			t.Errorf("interfering-%d lost", i)
		}
	}
	// The follower serves its write at once (the commit it made) and live
	// as the upstream made it (the merge, fetched in the background) soon.
	if f, err := follower.c.ReadFile(ctx, "bot", w.Path, ""); err != nil || !strings.Contains(f.Content, "PERSISTENT") {
		t.Errorf("the follower does not serve its own acknowledged write: %v %q", err, f.Content)
	}
	waitFor(t, "the follower to serve the acknowledged commit", func() bool {
		got, err := follower.c.Prompt(ctx, "bot", api.PromptRequest{})
		return err == nil && got.Commit == w.Commit
	})
}

// TestUpstreamAnswerLost: the upstream takes a write but its answer never
// arrives (the connection is cut after the pack was sent). The follower
// does not write it again: after a fetch it finds its commit in live and
// acknowledges; the entry is in live exactly once.
func TestUpstreamAnswerLost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	host := startDaemon(t, daemon.Options{})
	host.push(t, newWorkTree(t, botFiles), "bot")
	target, _ := url.Parse(host.remote)
	rp := httputil.NewSingleHostReverseProxy(target)
	var cut atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Host = target.Host
		if strings.HasSuffix(r.URL.Path, "/git-receive-pack") && cut.Add(1) == 1 {
			// Deliver the push, lose the answer.
			rec := httptest.NewRecorder()
			rp.ServeHTTP(rec, r)
			hj, ok := w.(http.Hijacker)
			if !ok {
				t.Error("no hijacker")
				return
			}
			conn, _, err := hj.Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	follower := startDaemon(t, daemon.Options{Upstream: proxy.URL + "/bot.git", Poll: time.Hour})
	waitFor(t, "the follower to deploy", func() bool { _, err := follower.c.Prompt(ctx, "bot", api.PromptRequest{}); return err == nil })

	w, err := follower.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: "ONCE-ONLY"})
	if err != nil {
		t.Fatalf("append whose first answer was lost: %v", err)
	}
	if cut.Load() < 1 {
		t.Fatal("no push went through the proxy")
	}
	bare := filepath.Join(host.repos, "bot.git")
	log := git(t, bare, "show", "live:"+w.Path)
	if n := strings.Count(log, "ONCE-ONLY\n"); n != 1 {
		t.Fatalf("the write is in live %d times:\n%s", n, log)
	}
	if live := strings.TrimSpace(git(t, bare, "rev-parse", "live")); live != w.Commit {
		t.Errorf("acknowledged %s, but the upstream's live is %s", w.Commit, live)
	}
}
