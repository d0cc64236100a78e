package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/internal/testenv"
)

// TestIdempotencyKey: a write sent again with the same Idempotency-Key is
// not applied again and gets the first answer (commit, path, ETag): an
// append, a file write whose If-Match no longer holds, a proposal, eight
// copies sent at once, and after the daemon restarts. The key is scoped
// by user, and recorded in the commit's trailer.
func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	tmp := shortTempDir(t)
	opts := daemon.Options{Now: func() time.Time { return day }, ReposDir: filepath.Join(tmp, "repos"),
		Socket: filepath.Join(tmp, "q.sock"), CacheDir: filepath.Join(tmp, "cache")}
	td := startDaemon(t, opts)
	td.push(t, newWorkTree(t, botFiles), "bot")
	bare := filepath.Join(td.repos, "bot.git")
	live := func() string { return strings.TrimSpace(git(t, bare, "rev-parse", "live")) }
	logOf := func(p string) string { return git(t, bare, "show", "live:"+p) }
	send := func(td *testDaemon, method, path, key string, h http.Header, body string) api.WriteResponse {
		t.Helper()
		if h == nil {
			h = http.Header{}
		}
		h.Set("Idempotency-Key", key)
		code, _, out := td.raw(t, method, path, h, body)
		var res api.WriteResponse
		if code != 200 || json.Unmarshal([]byte(out), &res) != nil {
			t.Fatalf("%s %s with key %q: %d %s", method, path, key, code, out)
		}
		return res
	}
	appendPath := "/v1/agents/bot/memory/append"

	first := send(td, "POST", appendPath, "k-append", nil, `{"text":"REMEMBER-ONCE"}`)
	before := live()
	again := send(td, "POST", appendPath, "k-append", nil, `{"text":"REMEMBER-ONCE"}`)
	if again != first {
		t.Errorf("the retry was answered %+v, the first write %+v", again, first)
	}
	if live() != before {
		t.Errorf("the retry moved live")
	}
	if n := strings.Count(logOf(first.Path), "REMEMBER-ONCE"); n != 1 {
		t.Errorf("the append is in live %d times", n)
	}
	msg := git(t, bare, "log", "-1", "--format=%B", first.Commit)
	if !strings.Contains(msg, "Quire-Idempotency-Key: bot::k-append memory/2026-11-22.md") {
		t.Errorf("the commit does not record the key:\n%s", msg)
	}
	// The same key from a user is another write.
	alice := send(td, "POST", appendPath, "k-append", nil, `{"text":"REMEMBER-ONCE","user":"alice"}`)
	if alice.Commit == first.Commit || alice.Path != "users/alice/memory/2026-11-22.md" {
		t.Errorf("the same key from alice was answered %+v", alice)
	}

	// A file write: the retry's If-Match is stale by now, yet it is
	// answered as the first write was, not 409.
	f, err := td.c.ReadFile(ctx, "bot", "MEMORY.md", "")
	if err != nil {
		t.Fatal(err)
	}
	put := http.Header{"If-Match": {f.ETag}}
	w1 := send(td, "PUT", "/v1/agents/bot/files/MEMORY.md", "k-put", put, "# Memory\n\nNew fact.\n")
	w2 := send(td, "PUT", "/v1/agents/bot/files/MEMORY.md", "k-put", put, "# Memory\n\nNew fact.\n")
	if w1 != w2 || w1.ETag == "" {
		t.Errorf("file write retried: %+v, first %+v", w2, w1)
	}
	// A proposal: one branch.
	soul, err := td.c.ReadFile(ctx, "bot", "SOUL.md", "")
	if err != nil {
		t.Fatal(err)
	}
	p1 := send(td, "PUT", "/v1/agents/bot/files/SOUL.md", "k-soul", http.Header{"If-Match": {soul.ETag}}, "# Soul\n\nProposed.\n")
	p2 := send(td, "PUT", "/v1/agents/bot/files/SOUL.md", "k-soul", http.Header{"If-Match": {soul.ETag}}, "# Soul\n\nProposed.\n")
	if p1 != p2 || p1.Branch != "proposals/bot/1" {
		t.Errorf("proposal retried: %+v, first %+v", p2, p1)
	}
	if branches := git(t, bare, "branch", "--list", "proposals/*"); strings.Count(branches, "proposals/") != 1 {
		t.Errorf("proposal branches:\n%s", branches)
	}

	// Eight copies at once (one batch, or several): one entry, one
	// answer.
	var wg sync.WaitGroup
	answers := make([]api.WriteResponse, 8)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			answers[i], err = td.c.MemoryAppend(api.WithIdempotencyKey(ctx, "k-burst"), "bot", api.AppendRequest{Text: "BURST-ONCE"})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for _, a := range answers[1:] {
		if a.Commit != answers[0].Commit || a.Path != answers[0].Path {
			t.Errorf("copies answered %+v and %+v", a, answers[0])
		}
	}
	if n := strings.Count(logOf(first.Path), "BURST-ONCE"); n != 1 {
		t.Errorf("the burst is in live %d times", n)
	}

	// After a restart the keys are read back from live's history.
	td.stop()
	td = startDaemon(t, opts)
	after := send(td, "POST", appendPath, "k-append", nil, `{"text":"REMEMBER-ONCE"}`)
	if after.Commit != first.Commit || after.Path != first.Path {
		t.Errorf("after a restart the retry was answered %+v, the first write %+v", after, first)
	}
	if n := strings.Count(logOf(first.Path), "REMEMBER-ONCE"); n != 1 {
		t.Errorf("after a restart the append is in live %d times", n)
	}
}

// TestIdempotencyKeyDir: a --dir source remembers its writes' keys (in
// memory: it makes no commits).
func TestIdempotencyKeyDir(t *testing.T) {
	t.Parallel()
	ctx := api.WithIdempotencyKey(context.Background(), "k-dir")
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, botFiles)
	td := startDaemon(t, daemon.Options{Dir: dir})
	a, err := td.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: "DIR-ONCE"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := td.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: "DIR-ONCE"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Commit != b.Commit || a.Path != b.Path || a.ETag != b.ETag {
		t.Errorf("retry answered %+v, first %+v", b, a)
	}
	log, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(a.Path)))
	if err != nil || strings.Count(string(log), "DIR-ONCE") != 1 {
		t.Errorf("the daily log holds the append %d times (%v)", strings.Count(string(log), "DIR-ONCE"), err)
	}
}

// TestRetryOnAnotherDaemon: a follower's push is held on its way to the
// host until the write's deadline cuts it: the follower answers 504
// outcome_unknown in time. The client retries with the same key on the
// other follower, which writes it. When the held push reaches the host
// after all, the host refuses it as already in live; a retry on the
// first follower is answered with the second's commit. Exactly one entry
// is in live.
func TestRetryOnAnotherDaemon(t *testing.T) {
	// Not parallel: it bounds the cut answer's time to a second past
	// the deadline, which other tests' load would stretch.
	ctx := context.Background()
	day := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return day }
	host := startDaemon(t, daemon.Options{Now: now})
	host.push(t, newWorkTree(t, botFiles), "bot")
	target, _ := url.Parse(host.remote)
	rp := httputil.NewSingleHostReverseProxy(target)
	held := make(chan *http.Request, 1)
	release := make(chan struct{})
	var holdOnce sync.Once
	forwarded := make(chan string, 1) // what the host answered the held push
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Host = target.Host
		hold := false
		if strings.HasSuffix(r.URL.Path, "/git-receive-pack") {
			holdOnce.Do(func() { hold = true })
		}
		if !hold {
			rp.ServeHTTP(w, r)
			return
		}
		// The push arrives whole; it reaches the host only once
		// released, long after the follower gave up.
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
			return
		}
		held <- r
		<-release
		out := *r.Clone(context.Background())
		out.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		rp.ServeHTTP(rec, &out)
		forwarded <- rec.Body.String()
	}))
	t.Cleanup(proxy.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	const deadline = 3 * time.Second
	// The followers' clocks differ by a minute: a copy of the write
	// each made would be another entry, another commit.
	later := func() time.Time { return day.Add(time.Minute) }
	cut := startDaemon(t, daemon.Options{Now: now, Upstream: proxy.URL + "/bot.git", Poll: time.Hour, WriteTimeout: deadline})
	other := startDaemon(t, daemon.Options{Now: later, Upstream: host.remote + "/bot.git", Poll: time.Hour})
	for _, f := range []*testDaemon{cut, other} {
		waitFor(t, "a follower to deploy", func() bool { _, err := f.c.Prompt(ctx, "bot", api.PromptRequest{}); return err == nil })
	}
	kctx := api.WithIdempotencyKey(ctx, "retry-elsewhere")
	req := api.AppendRequest{Text: "EXACTLY-ONCE"}

	start := time.Now()
	_, err := cut.c.MemoryAppend(kctx, "bot", req)
	took := time.Since(start)
	if e := api.AsError(err); err == nil || e.Code != api.CodeOutcomeUnknown || e.Status != http.StatusGatewayTimeout ||
		!strings.Contains(e.Message, "retry with the same Idempotency-Key") {
		t.Fatalf("the append whose push was cut: %v, want 504 outcome_unknown", err)
	}
	if took > deadline+time.Second {
		t.Errorf("answered after %s, past its deadline of %s and a second", took, deadline)
	}
	t.Logf("cut off after %s: %v", took.Round(time.Millisecond), err)
	select {
	case <-held:
	default:
		t.Fatal("the push was not held")
	}

	retried, err := other.c.MemoryAppend(kctx, "bot", req)
	if err != nil {
		t.Fatalf("the retry on the other follower: %v", err)
	}
	bare := filepath.Join(host.repos, "bot.git")
	count := func() int { return strings.Count(git(t, bare, "show", "live:"+retried.Path), "EXACTLY-ONCE") }
	if n := count(); n != 1 {
		t.Fatalf("after the retry the entry is in live %d times", n)
	}

	// The held push reaches the host now: refused, the write is there.
	close(release)
	if answer := <-forwarded; !strings.Contains(answer, "already in live") {
		t.Errorf("the host answered the late push:\n%q", answer)
	}
	if n := count(); n != 1 {
		t.Fatalf("after the late push the entry is in live %d times", n)
	}
	// The first follower, asked again, finds it (after a fetch, or when
	// its push is refused as a duplicate).
	again, err := cut.c.MemoryAppend(kctx, "bot", req)
	if err != nil {
		t.Fatalf("the retry on the first follower: %v", err)
	}
	if again.Commit != retried.Commit || again.Path != retried.Path {
		t.Errorf("the first follower answered %+v, the other %+v", again, retried)
	}
	if n := count(); n != 1 {
		t.Fatalf("the entry is in live %d times, want once", n)
	}
}
