package daemon_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/internal/testenv"
	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/workspace"
)

// TestIndexAfterAppendsIsARebuild: the index the daemon keeps up to
// date, one run after another, as entries are appended to users' daily
// logs and a log is edited or truncated, answers every search as an
// index built from scratch on the same commit does; an appended entry is
// searchable once indexed, an edited one no longer is.
func TestIndexAfterAppendsIsARebuild(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repos := filepath.Join(shortTempDir(t), "repos")
	td := startDaemon(t, daemon.Options{ReposDir: repos, Embedder: memory.Builtin{}})
	wt := newWorkTree(t, botFiles)
	td.push(t, wt, "bot")
	users := []string{"ana", "ben", "cy"}
	day := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	n := 0
	appendEntries := func(k int) string {
		var last string
		for range k {
			now := day.Add(time.Duration(n) * 3 * time.Hour) // a new log every few entries
			last = fmt.Sprintf("tok%dx", n)
			req := api.AppendRequest{User: users[n%len(users)], Text: fmt.Sprintf("entry %d: %s met customer %d", n, last, n%4), Now: &now}
			if _, err := td.c.MemoryAppend(ctx, "bot", req); err != nil {
				t.Fatal(err)
			}
			n++
		}
		return last
	}
	// A daily log is append-only through the API: a person edits it
	// with a push.
	rewrite := func(user, content string) {
		git(t, wt, "pull", "-q", "--no-rebase", "--no-edit", td.remote+"/bot.git", "live")
		enc, err := workspace.EncodeID(user)
		if err != nil {
			t.Fatal(err)
		}
		testenv.WriteFiles(t, wt, map[string]string{"users/" + enc + "/memory/2026-03-01.md": content})
		git(t, wt, "commit", "-qam", "edit "+user+"'s log")
		td.push(t, wt, "bot")
	}
	hits := func(td *testDaemon, query, user string) []memory.Hit {
		t.Helper()
		res, err := td.c.MemorySearch(ctx, "bot", api.SearchRequest{Query: query, User: user, Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		return res.Hits
	}
	found := func(query, user string) bool {
		for _, h := range hits(td, query, user) {
			if h.User == user && h.TextScore > 0 {
				return true
			}
		}
		return false
	}
	for _, step := range []struct {
		name           string
		do             func() (query, user string)
		searchable     bool
		goneQuery, who string
	}{
		{"appends", func() (string, string) { return appendEntries(7), users[6%3] }, true, "", ""},
		{"more appends", func() (string, string) { return appendEntries(8), users[14%3] }, true, "", ""},
		{"an edited log", func() (string, string) {
			rewrite("ana", "## 10:00\nrewritten by hand: tokedited\n")
			return "tokedited", "ana"
		}, true, "tok0x", "ana"},
		{"a truncated log", func() (string, string) {
			rewrite("ben", "## 10:01\nentry 1: tok1x\n")
			return "tok1x", "ben"
		}, true, "tok4x", "ben"},
		{"appends after", func() (string, string) { return appendEntries(5), users[19%3] }, true, "", ""},
	} {
		query, user := step.do()
		td.waitIndexed(t)
		if got := found(query, user); got != step.searchable {
			t.Errorf("%s: %q of %s found %v, want %v", step.name, query, user, got, step.searchable)
		}
		if step.goneQuery != "" && found(step.goneQuery, step.who) {
			t.Errorf("%s: %q of %s is still found", step.name, step.goneQuery, step.who)
		}
	}
	queries := []string{"entry", "met customer 2", "tok3x", "tokedited", "rewritten by hand", "wifi password"}
	var kept [][]memory.Hit
	for _, q := range queries {
		for _, u := range append([]string{""}, users...) {
			kept = append(kept, hits(td, q, u))
		}
	}
	td.stop()
	// The same repositories, an empty cache: built from scratch.
	fresh := startDaemon(t, daemon.Options{ReposDir: repos, Embedder: memory.Builtin{}})
	fresh.waitIndexed(t)
	i := 0
	for _, q := range queries {
		for _, u := range append([]string{""}, users...) {
			if got := hits(fresh, q, u); !reflect.DeepEqual(kept[i], got) {
				t.Errorf("search %q for %q: kept up to date %+v\nrebuilt %+v", q, u, kept[i], got)
			}
			i++
		}
	}
}
