package daemon_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/internal/testenv"
)

// TestHungUpstream: an upstream that stops answering (the TCP connection
// stays open, nothing comes back) does not hold up reads: while a fetch
// hangs, prompts and file reads are served from the last good commit at
// once, the fetch gives up after the fetch timeout and the status says
// so; once the upstream answers again the follower catches up and the
// error clears.
func TestHungUpstream(t *testing.T) {
	// Not parallel: it bounds the reads' time while a fetch hangs,
	// which other tests' load would stretch.
	ctx := context.Background()
	host := startDaemon(t, daemon.Options{})
	wt := newWorkTree(t, botFiles)
	host.push(t, wt, "bot")
	target, _ := url.Parse(host.remote)
	rp := httputil.NewSingleHostReverseProxy(target)
	var hang atomic.Bool
	var hung atomic.Int32
	release := make(chan struct{})
	var releaseOnce sync.Once
	unhang := func() { releaseOnce.Do(func() { hang.Store(false); close(release) }) }
	t.Cleanup(unhang)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hang.Load() {
			hung.Add(1)
			select { // answer nothing until released or the client gives up
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		r.Host = target.Host
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	const fetchTimeout = 3 * time.Second
	follower := startDaemon(t, daemon.Options{Upstream: proxy.URL + "/bot.git", Poll: 100 * time.Millisecond, FetchTimeout: fetchTimeout})
	var before api.PromptResponse
	waitFor(t, "the follower to deploy", func() bool {
		var err error
		before, err = follower.c.Prompt(ctx, "bot", api.PromptRequest{})
		return err == nil
	})

	// The upstream hangs, and moves on meanwhile.
	hang.Store(true)
	testenv.WriteFiles(t, wt, map[string]string{"SOUL.md": "# Soul\n\nCalm and exact. MARKER-TWO\n"})
	git(t, wt, "commit", "-qam", "second soul")
	host.push(t, wt, "bot")
	waitFor(t, "a fetch to hang", func() bool { return hung.Load() > 0 })
	hungAt := time.Now()
	for i := 0; i < 5; i++ {
		p, err := follower.c.Prompt(ctx, "bot", api.PromptRequest{User: fmt.Sprintf("guest-%d", i)})
		if err != nil {
			t.Fatalf("prompt while the upstream hangs: %v", err)
		}
		if p.Commit != before.Commit || !strings.Contains(p.Prompt, "MARKER-ONE") {
			t.Fatalf("served %s while the upstream hangs, want the last good commit %s", p.Commit, before.Commit)
		}
		if _, err := follower.c.ReadFile(ctx, "bot", "MEMORY.md", ""); err != nil {
			t.Fatalf("file read while the upstream hangs: %v", err)
		}
	}
	// Reads waited for nothing: they were all answered well before the
	// hung fetch could give up.
	if d := time.Since(hungAt); d >= fetchTimeout {
		t.Fatalf("reads took %s while a fetch hung: they waited for it", d)
	}
	waitFor(t, "the status to show the stuck upstream", func() bool {
		st, err := follower.c.Status(ctx)
		if err != nil || len(st.Agents) == 0 {
			return false
		}
		return strings.Contains(st.Agents[0].LastError, "upstream:") && strings.Contains(st.Agents[0].LastError, "no answer within")
	})

	unhang()
	waitFor(t, "the follower to catch up", func() bool {
		p, err := follower.c.Prompt(ctx, "bot", api.PromptRequest{})
		return err == nil && strings.Contains(p.Prompt, "MARKER-TWO")
	})
	waitFor(t, "the error to clear", func() bool {
		st, err := follower.c.Status(ctx)
		return err == nil && len(st.Agents) > 0 && st.Agents[0].LastError == ""
	})
}

// TestFollowHTTPBackend: a daemon follows a plain bare repository served
// by git's own http-backend (as any git server would serve it) and takes
// writes through it: the first write creates live at main, concurrent
// appends are all in live exactly once, and a person's push to main is
// merged into live and served.
func TestFollowHTTPBackend(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	backend, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	bare := filepath.Join(root, "bot.git")
	git(t, root, "init", "-q", "--bare", "-b", "main", bare)
	git(t, bare, "config", "http.receivepack", "true")
	wt := newWorkTree(t, botFiles)
	git(t, wt, "push", "-q", bare, "main")
	srv := httptest.NewServer(&cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(backend)), "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER=follower"},
	})
	t.Cleanup(srv.Close)

	follower := startDaemon(t, daemon.Options{Upstream: srv.URL + "/bot.git", Poll: 200 * time.Millisecond})
	waitFor(t, "the follower to deploy", func() bool { _, err := follower.c.Prompt(ctx, "bot", api.PromptRequest{}); return err == nil })

	const writers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if _, err := follower.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: fmt.Sprintf("note-%d-%d", w, i)}); err != nil {
					errs <- err
				}
			}
		}()
	}
	// A person pushes to main meanwhile, without pulling.
	testenv.WriteFiles(t, wt, map[string]string{"SOUL.md": "# Soul\n\nCalm and exact. MARKER-TWO\n"})
	git(t, wt, "commit", "-qam", "second soul")
	git(t, wt, "push", "-q", srv.URL+"/bot.git", "main")
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("append through http-backend: %v", err)
	}

	waitFor(t, "main merged into live and served", func() bool {
		p, err := follower.c.Prompt(ctx, "bot", api.PromptRequest{})
		return err == nil && strings.Contains(p.Prompt, "MARKER-TWO")
	})
	if out := git(t, bare, "merge-base", "--is-ancestor", "main", "live"); out != "" {
		t.Fatalf("merge-base: %s", out)
	}
	logs := git(t, bare, "log", "-p", "live", "--", "memory/")
	for w := 0; w < writers; w++ {
		for i := 0; i < each; i++ {
			note := fmt.Sprintf("note-%d-%d", w, i)
			if n := strings.Count(git(t, bare, "grep", "-h", "-F", note, "live", "--", "memory/"), note); n != 1 {
				t.Errorf("%s is in live %d times", note, n)
			}
		}
	}
	if !strings.Contains(logs, "note-0-0") {
		t.Errorf("live's memory history lacks the appends:\n%s", logs)
	}
}
