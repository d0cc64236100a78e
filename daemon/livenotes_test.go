package daemon_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
)

// served waits until td serves commit for agent bot, failing after
// within.
func served(t testing.TB, td *testDaemon, commit string, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	deadline := start.Add(within)
	for {
		p, err := td.c.Prompt(context.Background(), "bot", api.PromptRequest{})
		if err == nil && p.Commit == commit {
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			got := p.Commit
			if err != nil {
				got = err.Error()
			}
			t.Fatalf("not serving %s within %s (serving %s)", short(commit), within, got)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// fetchCounter is a reverse proxy in front of a git endpoint that counts
// the fetches through it (ref advertisements for upload-pack).
type fetchCounter struct {
	url string
	n   atomic.Int32
}

func newFetchCounter(t testing.TB, target string) *fetchCounter {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	fc := &fetchCounter{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Host = u.Host
		if strings.HasSuffix(r.URL.Path, "/info/refs") && r.URL.Query().Get("service") == "git-upload-pack" {
			fc.n.Add(1)
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	fc.url = srv.URL
	return fc
}

func (fc *fetchCounter) fetches() int {
	if fc == nil {
		return 0
	}
	return int(fc.n.Load())
}

// settled waits until a follower started through fc made its first two
// fetches (New's and Run's): from then on it fetches only when triggered
// or at its --poll.
func (fc *fetchCounter) settled(t testing.TB) {
	t.Helper()
	waitFor(t, "the follower's first fetches", func() bool { return fc.fetches() >= 2 })
}

// listening waits until n sessions listen for the live announcements on
// schema. A follower is ready, and has fetched, before it listens (on a
// connection of its own, opened in the background): an announcement sent
// in between is lost to it, and with an hour's --poll it would serve that
// write only after the test gave up.
func listening(t testing.TB, dbURL, schema string, n int) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	waitFor(t, fmt.Sprintf("%d followers to listen", n), func() bool {
		var got int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE application_name = 'quire listen' AND query LIKE 'LISTEN %' AND strpos(query, $1) > 0`,
			schema+".quire_live").Scan(&got)
		if err != nil {
			t.Fatal(err)
		}
		return got == n
	})
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// TestNotifyServesWritesElsewhere: a --repos host and two followers of
// it share one PostgreSQL database and poll only every hour. A write on
// any of them is served by the others soon after (LISTEN/NOTIFY), not at
// the next poll.
func TestNotifyServesWritesElsewhere(t *testing.T) {
	t.Parallel()
	dbURL, schema := pgSchema(t)
	ctx := context.Background()
	db := daemon.Options{DatabaseURL: dbURL, DatabaseSchema: schema}
	host := startDaemon(t, db)
	host.push(t, newWorkTree(t, botFiles), "bot")
	ca, cb := newFetchCounter(t, host.remote), newFetchCounter(t, host.remote)
	a := startDaemon(t, daemon.Options{DatabaseURL: dbURL, DatabaseSchema: schema, Upstream: ca.url + "/bot.git", Poll: time.Hour})
	b := startDaemon(t, daemon.Options{DatabaseURL: dbURL, DatabaseSchema: schema, Upstream: cb.url + "/bot.git", Poll: time.Hour})
	ca.settled(t)
	cb.settled(t)
	listening(t, dbURL, schema, 2)
	all := map[string]*testDaemon{"host": host, "a": a, "b": b}
	counters := map[string]*fetchCounter{"a": ca, "b": cb}
	for i, writer := range []string{"a", "b", "host", "a"} {
		fetched := counters[writer].fetches()
		w, err := all[writer].c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: fmt.Sprintf("written on %s (%d)", writer, i)})
		if err != nil {
			t.Fatalf("append on %s: %v", writer, err)
		}
		for name, td := range all {
			if name != writer {
				d := served(t, td, w.Commit, 5*time.Second)
				t.Logf("a write on %s served by %s after %s", writer, name, d)
			}
		}
		if fc := counters[writer]; fc != nil {
			// The announcements of its own commit (the host's) make
			// the writer fetch nothing.
			time.Sleep(400 * time.Millisecond)
			if n := fc.fetches() - fetched; n != 0 {
				t.Errorf("%s fetched %d times after its own write", writer, n)
			}
		}
	}
}

// TestNotifyAfterDatabaseOutage: announcements sent while a follower's
// connection to the database is down are lost; when it comes back, the
// follower fetches and serves what it missed.
func TestNotifyAfterDatabaseOutage(t *testing.T) {
	t.Parallel()
	dbURL, schema := pgSchema(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newFaultProxy(t, u.Host)
	viaProxy := *u
	viaProxy.Host = proxy.l.Addr().String()
	ctx := context.Background()
	host := startDaemon(t, daemon.Options{DatabaseURL: dbURL, DatabaseSchema: schema})
	host.push(t, newWorkTree(t, botFiles), "bot")
	fc := newFetchCounter(t, host.remote)
	f := startDaemon(t, daemon.Options{DatabaseURL: viaProxy.String(), DatabaseSchema: schema,
		Upstream: fc.url + "/bot.git", Poll: time.Hour})
	fc.settled(t)
	listening(t, dbURL, schema, 1)
	w, err := host.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: "before the outage"})
	if err != nil {
		t.Fatal(err)
	}
	served(t, f, w.Commit, 5*time.Second)
	// Indexed: no index run is retried after the outage (an index run
	// that finds a newer commit in the store makes a fetch too).
	waitFor(t, "the follower to index", func() bool {
		st, err := f.c.Status(ctx)
		return err == nil && len(st.Agents) == 1 && st.Agents[0].Indexed == w.Commit
	})

	proxy.setDown(true)
	w, err = host.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: "during the outage"})
	if err != nil {
		t.Fatal(err)
	}
	fetched := fc.fetches()
	time.Sleep(300 * time.Millisecond)
	if n := fc.fetches(); n != fetched {
		t.Fatalf("the follower fetched %d times without a database connection or a poll: is the test broken?", n-fetched)
	}
	proxy.setDown(false)
	served(t, f, w.Commit, 15*time.Second)
}

// TestNotifyLateDatabase: a follower started while the database is away
// (serving prompts, connecting in the background) listens once it
// connects, and catches up with what was announced before.
func TestNotifyLateDatabase(t *testing.T) {
	t.Parallel()
	dbURL, schema := pgSchema(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newFaultProxy(t, u.Host)
	proxy.setDown(true)
	viaProxy := *u
	viaProxy.Host = proxy.l.Addr().String()
	ctx := context.Background()
	host := startDaemon(t, daemon.Options{DatabaseURL: dbURL, DatabaseSchema: schema})
	host.push(t, newWorkTree(t, botFiles), "bot")
	fc := newFetchCounter(t, host.remote)
	f := startDaemon(t, daemon.Options{DatabaseURL: viaProxy.String(), DatabaseSchema: schema, DatabaseWait: true,
		Upstream: fc.url + "/bot.git", Poll: time.Hour})
	fc.settled(t)
	w, err := host.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: "before the follower's database"})
	if err != nil {
		t.Fatal(err)
	}
	proxy.setDown(false)
	served(t, f, w.Commit, 15*time.Second)
	waitFor(t, "the follower to index", func() bool {
		st, err := f.c.Status(ctx)
		return err == nil && len(st.Agents) == 1 && st.Agents[0].Indexed == w.Commit
	})
	w, err = host.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: "after"})
	if err != nil {
		t.Fatal(err)
	}
	served(t, f, w.Commit, 5*time.Second)
}

// BenchmarkWriteServedElsewhere: three daemons on one database (a --repos
// host, followers a and b polling every hour); a writes, and the time
// from a's acknowledgement until b deploys that commit is measured (b's
// event stream). Target: p99 ≤ 1 s.
func BenchmarkWriteServedElsewhere(b *testing.B) {
	dbURL, schema := pgSchema(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	host := startDaemon(b, daemon.Options{DatabaseURL: dbURL, DatabaseSchema: schema})
	host.push(b, newWorkTree(b, botFiles), "bot")
	up := host.remote + "/bot.git"
	fa := startDaemon(b, daemon.Options{DatabaseURL: dbURL, DatabaseSchema: schema, Upstream: up, Poll: time.Hour})
	cb := newFetchCounter(b, host.remote)
	fb := startDaemon(b, daemon.Options{DatabaseURL: dbURL, DatabaseSchema: schema, Upstream: cb.url + "/bot.git", Poll: time.Hour})
	cb.settled(b)
	deployed := fb.deploys(b, ctx)
	var ds []time.Duration
	b.ResetTimer()
	for i := range b.N {
		w, err := fa.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: fmt.Sprintf("entry %d", i)})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		timeout := time.After(10 * time.Second)
	wait:
		for {
			select {
			case c := <-deployed:
				if c == w.Commit {
					break wait
				}
			case <-timeout:
				b.Fatalf("b did not deploy %s within 10 s", short(w.Commit))
			}
		}
		ds = append(ds, time.Since(start))
	}
	b.StopTimer()
	pct(b, ds)
}
