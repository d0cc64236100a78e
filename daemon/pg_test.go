package daemon_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/internal/testenv"
	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/pgstore"
)

// pgSchema returns the test database URL and a fresh schema, dropped when
// t ends; it skips the test without QUIRE_TEST_DATABASE_URL.
func pgSchema(t testing.TB) (string, string) {
	t.Helper()
	dbURL := os.Getenv("QUIRE_TEST_DATABASE_URL")
	if dbURL == "" {
		t.Skip("QUIRE_TEST_DATABASE_URL is not set: the daemon on PostgreSQL is NOT tested (run `make test`)")
	}
	var b [6]byte
	rand.Read(b[:])
	schema := "quire_daemon_test_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, dbURL)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return dbURL, schema
}

// faultProxy forwards TCP connections to a real PostgreSQL server and can
// cut them all, as a network partition or a stopped server would, without
// disturbing anyone else using that server.
type faultProxy struct {
	l      net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  []net.Conn
	// hole, when set, keeps every connection open but forwards nothing:
	// a blackholed network path.
	hole atomic.Bool
}

// holeWriter forwards to w unless the proxy is blackholing.
type holeWriter struct {
	p *faultProxy
	w io.Writer
}

func (h holeWriter) Write(b []byte) (int, error) {
	if h.p.hole.Load() {
		return len(b), nil
	}
	return h.w.Write(b)
}

func newFaultProxy(t *testing.T, target string) *faultProxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{l: l, target: target}
	t.Cleanup(func() { l.Close(); p.setDown(true) })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			down := p.down
			p.mu.Unlock()
			if down {
				c.Close()
				continue
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { io.Copy(holeWriter{p, s}, c); s.Close() }()
			go func() { io.Copy(holeWriter{p, c}, s); c.Close() }()
		}
	}()
	return p
}

func (p *faultProxy) setDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
	if down {
		for _, c := range p.conns {
			c.Close()
		}
		p.conns = nil
	}
}

// TestPostgresBlackhole: a database that stops answering without closing
// its connections does not stall indexing silently: the index run times
// out with an error in status, and the lag counts from the oldest
// deployment not indexed, which later writes do not reset.
func TestPostgresBlackhole(t *testing.T) {
	t.Parallel()
	dbURL, schema := pgSchema(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newFaultProxy(t, u.Host)
	u.Host = proxy.l.Addr().String()
	ctx := context.Background()
	store, err := pgstore.Open(ctx, pgstore.Options{URL: u.String(), Schema: schema, Embedder: memory.Builtin{}, MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	// The daemon's clock runs ahead by skew: the test ages the
	// unindexed deployment by moving it, not by sleeping.
	var skew atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	// Short enough to see the blackhole soon, long enough for the first
	// index run of a loaded machine (-race, other tests in parallel).
	td := startDaemon(t, daemon.Options{Store: store, IndexTimeout: 2 * time.Second, Now: now})
	wt := newWorkTree(t, botFiles)
	td.push(t, wt, "bot")
	waitFor(t, "the first index", func() bool {
		st, err := td.c.Status(ctx)
		return err == nil && len(st.Agents) == 1 && st.Agents[0].Indexed == st.Agents[0].Deployed
	})
	proxy.hole.Store(true)
	defer proxy.hole.Store(false)
	pushed := time.Now()
	testenv.WriteFiles(t, wt, map[string]string{"MEMORY.md": "# Memory\n\nThe lift is serviced on Mondays.\n"})
	git(t, wt, "commit", "-qam", "memory")
	git(t, wt, "push", td.remote+"/bot.git", "main")
	var st api.Status
	waitFor(t, "an index error in status", func() bool {
		st, err = td.c.Status(ctx)
		return err == nil && len(st.Agents) == 1 && strings.Contains(st.Agents[0].LastError, "did not answer")
	})
	const aged = 300 * time.Millisecond
	skew.Add(int64(aged))
	if _, err := td.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: "A later write."}); err != nil {
		t.Fatal(err)
	}
	st, err = td.c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	since := time.Since(pushed) + aged // on the daemon's clock
	if a := st.Agents[0]; a.LagSeconds < aged.Seconds() || a.LagSeconds > since.Seconds()+1 {
		t.Fatalf("lag %.2f s after a write; the unindexed push was %.2f s ago", a.LagSeconds, since.Seconds())
	}
	proxy.hole.Store(false)
	waitFor(t, "catching up", func() bool {
		st, err := td.c.Status(ctx)
		return err == nil && st.Agents[0].Indexed == st.Agents[0].Deployed && st.Agents[0].LagSeconds == 0
	})
}

// TestPostgresOutage serves prompts while PostgreSQL is unreachable,
// answers memory search with 503 and a clear message, and catches up
// (writes made meanwhile are indexed) once it is back.
func TestPostgresOutage(t *testing.T) {
	t.Parallel()
	dbURL, schema := pgSchema(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newFaultProxy(t, u.Host)
	u.Host = proxy.l.Addr().String()
	ctx := context.Background()
	store, err := pgstore.Open(ctx, pgstore.Options{URL: u.String(), Schema: schema, Embedder: memory.Builtin{}, MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	td := startDaemon(t, daemon.Options{Store: store})
	wt := newWorkTree(t, botFiles)
	out := td.push(t, wt, "bot")
	if !strings.Contains(out, "chunks re-indexed") && !strings.Contains(out, "indexing continues") {
		t.Fatalf("push report:\n%s", out)
	}
	waitFor(t, "the first index", func() bool {
		res, err := td.c.MemorySearch(ctx, "bot", api.SearchRequest{Query: "wifi password"})
		return err == nil && len(res.Hits) > 0
	})

	proxy.setDown(true)
	for i := 0; i < 20; i++ {
		if _, err := td.c.Prompt(ctx, "bot", api.PromptRequest{}); err != nil {
			t.Fatalf("prompt during the outage: %v", err)
		}
	}
	_, err = td.c.MemorySearch(ctx, "bot", api.SearchRequest{Query: "wifi password"})
	if apiStatus(err) != http.StatusServiceUnavailable || !strings.Contains(err.Error(), "prompts are still served") {
		t.Fatalf("search during the outage: %v", err)
	}
	// A write during the outage is committed; its indexing waits.
	if _, err := td.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: "The kettle is descaled. quokkaword"}); err != nil {
		t.Fatalf("append during the outage: %v", err)
	}
	waitFor(t, "the status to show the index error", func() bool {
		st, _ := td.c.Status(ctx)
		return len(st.Agents) == 1 && strings.Contains(st.Agents[0].LastError, "index") && st.Agents[0].Indexed != st.Agents[0].Deployed
	})

	proxy.setDown(false)
	waitFor(t, "search to recover and catch up", func() bool {
		res, err := td.c.MemorySearch(ctx, "bot", api.SearchRequest{Query: "quokkaword"})
		return err == nil && len(res.Hits) > 0 && strings.Contains(res.Hits[0].Text, "quokkaword")
	})
	st, err := td.c.Status(ctx)
	if err != nil || st.Agents[0].Indexed != st.Agents[0].Deployed || st.Agents[0].LastError != "" {
		t.Fatalf("status after recovery: %+v %v", st, err)
	}
}

// TestPostgresRestart: a second daemon on the same database and
// repositories finds the index at HEAD and does not duplicate chunks.
func TestPostgresRestart(t *testing.T) {
	t.Parallel()
	dbURL, schema := pgSchema(t)
	ctx := context.Background()
	open := func() *pgstore.Store {
		s, err := pgstore.Open(ctx, pgstore.Options{URL: dbURL, Schema: schema, Embedder: memory.Builtin{}, MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	td := startDaemon(t, daemon.Options{Store: open()})
	wt := newWorkTree(t, botFiles)
	td.push(t, wt, "bot")
	if _, err := td.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: "First entry."}); err != nil {
		t.Fatal(err)
	}
	td.waitIndexed(t)
	td.stop()

	check := open()
	defer check.Close()
	before, err := check.Chunks(ctx, "bot")
	if err != nil {
		t.Fatal(err)
	}
	td2 := startDaemon(t, daemon.Options{Store: open(), ReposDir: td.repos})
	td2.waitIndexed(t)
	after, err := check.Chunks(ctx, "bot")
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) || len(after) == 0 {
		t.Fatalf("chunks before restart %d, after %d", len(before), len(after))
	}
	seen := map[string]bool{}
	for _, c := range after {
		k := c.User + "\x00" + c.Path + "\x00" + string(rune(c.StartLine))
		if seen[k] {
			t.Fatalf("duplicate chunk %s:%d", c.Path, c.StartLine)
		}
		seen[k] = true
	}
}

// TestTwoDaemonsOneDatabase: two daemons following one upstream and
// sharing one database index each commit once between them.
func TestTwoDaemonsOneDatabase(t *testing.T) {
	t.Parallel()
	dbURL, schema := pgSchema(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bare := filepath.Join(t.TempDir(), "up.git")
	git(t, t.TempDir(), "init", "-q", "--bare", "-b", "main", bare)
	var mu sync.Mutex
	chunks := map[string]int{} // commit → chunks written by either daemon
	events := map[string]int{} // commit → index events
	var daemons []*testDaemon
	for i := 0; i < 2; i++ {
		store, err := pgstore.Open(ctx, pgstore.Options{URL: dbURL, Schema: schema, Embedder: memory.Builtin{}, MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		td := startDaemon(t, daemon.Options{Store: store, Upstream: "file://" + bare, Poll: 50 * time.Millisecond})
		daemons = append(daemons, td)
		stream := td.subscribe(t, ctx)
		go func() {
			for e := range stream {
				if e.Type == "index" {
					mu.Lock()
					chunks[e.Commit] += e.Chunks
					events[e.Commit]++
					mu.Unlock()
				}
			}
		}()
	}
	wt := newWorkTree(t, botFiles)
	for round := 0; round < 3; round++ {
		if round > 0 {
			testenv.WriteFiles(t, wt, map[string]string{"MEMORY.md": strings.Repeat("A fact worth keeping.\n\n", 10*round)})
			git(t, wt, "commit", "-qam", "more memory")
		}
		git(t, wt, "push", "-q", bare, "main")
		head := strings.TrimSpace(git(t, wt, "rev-parse", "HEAD"))
		waitFor(t, "both daemons to index "+head, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return events[head] == 2
		})
		check, err := pgstore.Open(ctx, pgstore.Options{URL: dbURL, Schema: schema, Embedder: memory.Builtin{}, MaxConns: 1})
		if err != nil {
			t.Fatal(err)
		}
		all, err := check.Chunks(ctx, "bot")
		check.Close()
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		written := chunks[head]
		mu.Unlock()
		if round == 0 && written != len(all) {
			t.Errorf("round 0: the daemons wrote %d chunks for %d in the index: a commit was indexed twice", written, len(all))
		}
		if round > 0 && written != 1 {
			t.Errorf("round %d: the daemons wrote %d chunks for one changed MEMORY.md chunk", round, written)
		}
	}
	for _, td := range daemons {
		st, _ := td.c.Status(ctx)
		if len(st.Agents) != 1 || st.Agents[0].Indexed != st.Agents[0].Deployed {
			t.Errorf("status: %+v", st)
		}
	}
}

// TestDatabaseOption builds the PostgreSQL store from DatabaseURL (what
// `quire serve --database` does).
func TestDatabaseOption(t *testing.T) {
	t.Parallel()
	dbURL, schema := pgSchema(t)
	ctx := context.Background()
	td := startDaemon(t, daemon.Options{DatabaseURL: dbURL, DatabaseSchema: schema})
	td.push(t, newWorkTree(t, botFiles), "bot")
	waitFor(t, "search on PostgreSQL", func() bool {
		res, err := td.c.MemorySearch(ctx, "bot", api.SearchRequest{Query: "wifi password"})
		return err == nil && len(res.Hits) > 0 && res.Hits[0].Path == "MEMORY.md"
	})
	if _, err := daemon.New(ctx, daemon.Options{ReposDir: t.TempDir(), DatabaseURL: "postgres://nobody@127.0.0.1:1/none?connect_timeout=1"}); err == nil || !strings.Contains(err.Error(), "PostgreSQL") {
		t.Fatalf("unreachable database: %v", err)
	}
}

// TestDatabaseUnreachableAtStart: with DatabaseWait the daemon starts
// while PostgreSQL does not answer, serves prompts, answers search with
// 503, and indexes once the database is reachable.
func TestDatabaseUnreachableAtStart(t *testing.T) {
	t.Parallel()
	dbURL, schema := pgSchema(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newFaultProxy(t, u.Host)
	proxy.setDown(true)
	u.Host = proxy.l.Addr().String()
	ctx := context.Background()
	td := startDaemon(t, daemon.Options{DatabaseURL: u.String(), DatabaseSchema: schema, DatabaseWait: true})
	td.push(t, newWorkTree(t, botFiles), "bot")
	if _, err := td.c.Prompt(ctx, "bot", api.PromptRequest{}); err != nil {
		t.Fatalf("prompt without a database: %v", err)
	}
	_, err = td.c.MemorySearch(ctx, "bot", api.SearchRequest{Query: "wifi"})
	if apiStatus(err) != http.StatusServiceUnavailable || !strings.Contains(err.Error(), "not connected yet") {
		t.Fatalf("search without a database: %v", err)
	}
	proxy.setDown(false)
	waitFor(t, "the store to connect and index", func() bool {
		res, err := td.c.MemorySearch(ctx, "bot", api.SearchRequest{Query: "wifi password"})
		return err == nil && len(res.Hits) > 0
	})
}
