package daemon_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
)

// TestStaleFollowerDoesNotIndexOlder: two daemons on one database. A
// follower restarts with a stale mirror while the upstream is down; the
// store holds a newer commit the other daemon indexed. The follower must
// not index its older commit over it, and its status says what the store
// holds.
func TestStaleFollowerDoesNotIndexOlder(t *testing.T) {
	t.Parallel()
	dbURL, schema := pgSchema(t)
	ctx := context.Background()
	host := startDaemon(t, daemon.Options{DatabaseURL: dbURL, DatabaseSchema: schema})
	host.push(t, newWorkTree(t, botFiles), "bot")
	cache := t.TempDir()
	upstream := host.remote + "/bot.git"
	indexed := func(td *testDaemon) (string, string) {
		st, err := td.c.Status(ctx)
		if err != nil || len(st.Agents) == 0 {
			return "", ""
		}
		return st.Agents[0].Deployed, st.Agents[0].Indexed
	}
	f := startDaemon(t, daemon.Options{Upstream: upstream, CacheDir: cache, DatabaseURL: dbURL, DatabaseSchema: schema, Poll: time.Hour})
	waitFor(t, "the follower to index", func() bool { d, i := indexed(f); return d != "" && d == i })
	stale, _ := indexed(f)
	f.stop()

	w, err := host.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: "zebrafinch oat milk"})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the host to index the newer commit", func() bool { _, i := indexed(host); return i == w.Commit })
	host.stop()

	f2 := startDaemon(t, daemon.Options{Upstream: upstream, CacheDir: cache, DatabaseURL: dbURL, DatabaseSchema: schema, Poll: time.Hour})
	waitFor(t, "the restarted follower to settle its index", func() bool { _, i := indexed(f2); return i != "" })
	d, i := indexed(f2)
	if d != stale {
		t.Fatalf("the follower deployed %s, want its stale mirror's %s", d, stale)
	}
	if i != w.Commit {
		t.Fatalf("status says indexed %s; the store holds %s", i, w.Commit)
	}
	res, err := f2.c.MemorySearch(ctx, "bot", api.SearchRequest{Query: "zebrafinch"})
	if err != nil || len(res.Hits) == 0 || !strings.Contains(res.Hits[0].Text, "zebrafinch") {
		t.Fatalf("the newer commit's memory is gone from the store: %+v %v", res, err)
	}
}
