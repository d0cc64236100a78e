package mcp

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon/api"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestSessionFlood: a flood of initializes with one token opens as many
// sessions as the per-token limit and is refused past it with an error
// naming the flag; other tokens still get sessions up to the total,
// which is refused naming its flag; idle sessions are closed (by the
// limits' clock, moved by hand); nothing refused holds a session.
func TestSessionFlood(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	const perToken, total = 4, 6
	sessions := NewSessions(SessionLimits{PerToken: perToken, Total: total, Idle: time.Hour, Now: clock.Now})
	var logged strings.Builder
	lw := &lockedWriter{w: &logged}
	log := slog.New(slog.NewTextHandler(lw, &slog.HandlerOptions{Level: slog.LevelWarn}))
	warnings := func() int {
		lw.mu.Lock()
		defer lw.mu.Unlock()
		return strings.Count(logged.String(), "session refused")
	}
	h := Handler(&fakeBackend{}, HTTPOptions{Options: Options{Logger: log}, Tokens: api.Tokens{"tok-a": {"alpha"}, "tok-b": {"alpha"}, "tok-c": {"alpha"}}, Sessions: sessions}).(*handler)
	srv := httptest.NewServer(h)
	defer srv.Close()
	url := srv.URL + Path

	const flood = 10 * perToken
	answers := make(chan httpAnswer, flood)
	var wg sync.WaitGroup
	for range flood {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers <- initialize(t, url, "tok-a")
		}()
	}
	wg.Wait()
	close(answers)
	opened := map[string]bool{}
	for a := range answers {
		switch {
		case a.status == http.StatusOK && a.session != "":
			opened[a.session] = true
		case a.status == http.StatusTooManyRequests && strings.Contains(a.body, `"code":-32000`) &&
			strings.Contains(a.body, "this token has 4 MCP sessions open, the most quire serve --mcp-sessions-per-token allows") &&
			strings.Contains(a.body, `"data":{"code":"too_many_sessions"}`):
		default:
			t.Errorf("initialize in the flood: %d %s", a.status, a.body)
		}
	}
	if len(opened) != perToken {
		t.Errorf("the flood opened %d sessions, want %d (the per-token limit)", len(opened), perToken)
	}
	if n := warnings(); n != 1 {
		t.Errorf("the flood logged %d warnings, want 1 (the rest at debug)", n)
	}

	// Another token still gets sessions, up to the total.
	var bSessions []string
	for range total - perToken {
		a := initialize(t, url, "tok-b")
		if a.status != http.StatusOK {
			t.Fatalf("tok-b's initialize under the total: %d %s", a.status, a.body)
		}
		bSessions = append(bSessions, a.session)
	}
	if a := initialize(t, url, "tok-c"); a.status != http.StatusServiceUnavailable ||
		!strings.Contains(a.body, "the daemon has 6 MCP sessions open, the most quire serve --mcp-sessions allows") {
		t.Errorf("initialize past the total: %d %s", a.status, a.body)
	}
	if n := warnings(); n != 2 {
		t.Errorf("%d warnings after the total was reached too, want 2", n)
	}
	if n, open := liveSessions(h), sessions.Open(); n != total || open != total {
		t.Errorf("%d SDK sessions live, %d counted; want %d: what is refused must hold nothing", n, open, total)
	}

	// A DELETE frees the session's slot at once.
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Authorization", "Bearer tok-b")
	req.Header.Set("Mcp-Session-Id", bSessions[0])
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE a session: %v %v", resp, err)
	}
	if a := initialize(t, url, "tok-c"); a.status != http.StatusOK {
		t.Errorf("initialize after a DELETE freed a slot: %d %s", a.status, a.body)
	}

	// Idle an hour: closed when a new session comes; one with a request
	// two minutes ago stays.
	var kept, idled string
	for id := range opened {
		if kept == "" {
			kept = id
		} else {
			idled = id
		}
	}
	clock.Add(58 * time.Minute)
	if a := post(t, url, "tok-a", kept, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); a.status != http.StatusOK {
		t.Errorf("ping in a session: %d %s", a.status, a.body)
	}
	clock.Add(2 * time.Minute)
	if a := initialize(t, url, "tok-a"); a.status != http.StatusOK {
		t.Fatalf("initialize after the sessions idled out: %d %s", a.status, a.body)
	}
	if n, open := liveSessions(h), sessions.Open(); n != 2 || open != 2 {
		t.Errorf("after the idle ones closed: %d SDK sessions live, %d counted; want 2 (the one in use and the new one)", n, open)
	}
	if a := post(t, url, "tok-a", idled, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); a.status != http.StatusNotFound {
		t.Errorf("a request to an idled-out session: %d %s, want 404 (the client initializes anew)", a.status, a.body)
	}
	if a := post(t, url, "tok-a", kept, `{"jsonrpc":"2.0","id":4,"method":"ping"}`); a.status != http.StatusOK {
		t.Errorf("a request to the session in use: %d %s", a.status, a.body)
	}
	for range perToken - 2 {
		if a := initialize(t, url, "tok-a"); a.status != http.StatusOK {
			t.Errorf("tok-a after its sessions idled out: %d %s", a.status, a.body)
		}
	}
	if a := initialize(t, url, "tok-a"); a.status != http.StatusTooManyRequests {
		t.Errorf("tok-a past its limit again: %d %s", a.status, a.body)
	}
}
