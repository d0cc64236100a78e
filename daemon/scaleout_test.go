package daemon_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/client"
)

// TestThreeDaemons: a --repos host and two --upstream followers of it,
// one PostgreSQL. Four clients on each daemon append 50 entries each at
// once; one follower (a process of its own) is killed with SIGKILL in
// the middle of the burst and started again. Every acknowledged append is
// in the host's live exactly once, an unacknowledged one is there whole
// or not at all, and all three daemons serve the same prompt and the same
// search hits soon after the last write.
func TestThreeDaemons(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("600 appends on three daemons")
	}
	dbURL, schema := pgSchema(t)
	ctx := context.Background()
	day := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	host := startDaemon(t, daemon.Options{DatabaseURL: dbURL, DatabaseSchema: schema})
	host.push(t, newWorkTree(t, botFiles), "bot")
	upstream := host.remote + "/bot.git"
	follower := startDaemon(t, daemon.Options{Upstream: upstream, Poll: 100 * time.Millisecond, DatabaseURL: dbURL, DatabaseSchema: schema})

	// The second follower runs as a process of its own, to be killed.
	tmp := shortTempDir(t)
	var procMu sync.Mutex
	var proc *exec.Cmd
	startProc := func() {
		ready := filepath.Join(tmp, fmt.Sprintf("ready-%d", time.Now().UnixNano()))
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "QUIRE_DAEMON_HELPER=1", "QUIRE_HELPER_UPSTREAM="+upstream,
			"QUIRE_HELPER_DB="+dbURL, "QUIRE_HELPER_SCHEMA="+schema,
			"QUIRE_HELPER_SOCKET="+filepath.Join(tmp, "q.sock"), "QUIRE_HELPER_CACHE="+filepath.Join(tmp, "cache"),
			"QUIRE_HELPER_ADDR="+ready)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procMu.Lock()
		proc = cmd
		procMu.Unlock()
		waitFor(t, "the follower process to start", func() bool { _, err := os.Stat(ready); return err == nil })
	}
	startProc()
	t.Cleanup(func() {
		procMu.Lock()
		defer procMu.Unlock()
		proc.Process.Kill()
		proc.Wait()
	})
	killed := &client.Client{Socket: filepath.Join(tmp, "q.sock")}
	clients := []*client.Client{host.c, follower.c, killed}
	for _, c := range clients[1:] {
		waitFor(t, "a follower to deploy", func() bool { _, err := c.Prompt(ctx, "bot", api.PromptRequest{}); return err == nil })
	}

	const perDaemon, each = 4, 50
	var mu sync.Mutex
	acked, unacked := map[string]bool{}, map[string]bool{}
	ackedOnKilled := 0
	restarted := make(chan struct{})
	var wg sync.WaitGroup
	for di, c := range clients {
		for ci := range perDaemon {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					text := fmt.Sprintf("entry-%d-%d-%d", di, ci, i)
					_, err := c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: text, Now: &day})
					mu.Lock()
					if err != nil {
						unacked[text] = true
					} else {
						acked[text] = true
						if di == 2 {
							ackedOnKilled++
						}
					}
					mu.Unlock()
					if err != nil && di == 2 {
						<-restarted // the process is down: go on once it is back
					} else if err != nil {
						t.Errorf("daemon %d: %v", di, err)
					}
				}
			}()
		}
	}
	// Kill the follower process in the middle of its burst.
	waitFor(t, "the killed follower's first acknowledgements", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return ackedOnKilled >= 8
	})
	procMu.Lock()
	proc.Process.Signal(syscall.SIGKILL)
	proc.Wait()
	procMu.Unlock()
	startProc()
	waitFor(t, "the restarted follower to deploy", func() bool { _, err := killed.Prompt(ctx, "bot", api.PromptRequest{}); return err == nil })
	close(restarted)
	wg.Wait()
	lastWrite := time.Now()
	if len(acked)+len(unacked) != 3*perDaemon*each {
		t.Fatalf("%d acknowledged + %d not, want %d writes", len(acked), len(unacked), 3*perDaemon*each)
	}
	t.Logf("%d appends acknowledged, %d not (the killed process's in-flight ones)", len(acked), len(unacked))

	bare := filepath.Join(host.repos, "bot.git")
	log := git(t, bare, "show", "live:memory/2026-11-22.md")
	for text := range acked {
		if n := strings.Count(log, text+"\n"); n != 1 {
			t.Errorf("acknowledged %s is in live %d times, want once", text, n)
		}
	}
	for text := range unacked {
		if n := strings.Count(log, text+"\n"); n > 1 {
			t.Errorf("unacknowledged %s is in live %d times, want at most once", text, n)
		}
	}
	// Nothing half-written: every line is a heading, blank, or a whole
	// entry.
	line := regexp.MustCompile(`^(# 2026-11-22|## \d\d:\d\d|entry-\d-\d-\d+|)$`)
	for i, l := range strings.Split(log, "\n") {
		if !line.MatchString(l) {
			t.Errorf("live's daily log line %d is not a whole entry: %q", i+1, l)
		}
	}

	live := strings.TrimSpace(git(t, bare, "rev-parse", "live"))
	hits := func(c *client.Client) string {
		res, err := c.MemorySearch(ctx, "bot", api.SearchRequest{Query: "entry-1-2-7"})
		if err != nil {
			return "error: " + err.Error()
		}
		var b strings.Builder
		for _, h := range res.Hits {
			fmt.Fprintf(&b, "%s:%d-%d %.4f\n", h.Path, h.StartLine, h.EndLine, h.Score)
		}
		return b.String()
	}
	waitFor(t, "all three daemons to serve live's prompt and search hits", func() bool {
		var prompts, searches []string
		for _, c := range clients {
			p, err := c.Prompt(ctx, "bot", api.PromptRequest{})
			if err != nil || p.Commit != live {
				return false
			}
			st, err := c.Status(ctx)
			if err != nil || len(st.Agents) != 1 || st.Agents[0].Indexed != live {
				return false
			}
			prompts = append(prompts, p.Prompt)
			searches = append(searches, hits(c))
		}
		return prompts[0] == prompts[1] && prompts[1] == prompts[2] &&
			searches[0] == searches[1] && searches[1] == searches[2] && strings.Contains(searches[0], "memory/2026-11-22.md")
	})
	t.Logf("all three served the same prompt and hits %v after the last write", time.Since(lastWrite).Round(time.Millisecond))
}
