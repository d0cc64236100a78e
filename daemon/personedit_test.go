package daemon_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
)

// etagOf reads path (of user, "" for the agent's) through the console
// and returns its ETag.
func (b *browser) etagOf(agent, path, user string) string {
	b.t.Helper()
	q := ""
	if user != "" {
		q = "?user=" + user
	}
	st, _, body := b.do("GET", "/v1/agents/"+agent+"/files/"+path+q, "", nil)
	var f api.File
	if st != 200 || json.Unmarshal([]byte(body), &f) != nil {
		b.t.Fatalf("read %s: %d %s", path, st, body)
	}
	return f.ETag
}

// TestConsolePersonEditSeedsNewUser: a person's first edit for a new
// user stores the user's seed files with it, as an agent's first write
// does, in a commit with the user's trailer authored by the person.
func TestConsolePersonEditSeedsNewUser(t *testing.T) {
	td := startConsole(t)
	bare := filepath.Join(td.repos, "bot.git")
	b := newBrowser(t, "http://"+td.d.APIAddr())
	b.login("tok-ada")
	// USER.md of a new user reads as the agent's (a seed): editing it
	// with that ETag is not stale.
	tag := b.etagOf("bot", "USER.md", "neo")
	st, _, body := b.change("PUT", "/v1/agents/bot/files/USER.md?user=neo", `{"content":"# User\n\nNeo, by a person.\n"}`, map[string]string{"If-Match": tag})
	if st != 200 || !strings.Contains(body, `"branch":"live"`) {
		t.Fatalf("a person's first edit for a new user: %d %s", st, body)
	}
	files := strings.Fields(git(t, bare, "ls-tree", "-r", "--name-only", "live", "users/"))
	if strings.Join(files, " ") != "users/neo/BOOTSTRAP.md users/neo/USER.md" {
		t.Fatalf("live holds %v for the new user, want BOOTSTRAP.md seeded beside the edited USER.md", files)
	}
	if got := git(t, bare, "show", "live:users/neo/USER.md"); !strings.Contains(got, "by a person") {
		t.Fatalf("USER.md on live: %q", got)
	}
	if got := git(t, bare, "log", "-1", "--format=%an|%B", "live"); !strings.HasPrefix(got, "Ada Lovelace|") || !strings.Contains(got, "Quire-User: neo") {
		t.Fatalf("the commit: %q, want Ada's with the user's trailer", got)
	}
}

// TestConsolePersonEditDir: on a --dir source a person's edit (memory or
// persona) is written into the working tree; a stale one is refused with
// the file as it is there.
func TestConsolePersonEditDir(t *testing.T) {
	dir := newWorkTree(t, botFiles)
	td := startDaemon(t, daemon.Options{Dir: dir, Poll: time.Hour, APIListen: "127.0.0.1:0", Tokens: consoleTokens, People: consolePeople})
	b := newBrowser(t, "http://"+td.d.APIAddr())
	b.login("tok-ada")
	for _, p := range []string{"MEMORY.md", "SOUL.md"} {
		tag := b.etagOf("bot", p, "")
		st, _, body := b.change("PUT", "/v1/agents/bot/files/"+p, `{"content":"# Edited\n\nBy a person in the console.\n"}`, map[string]string{"If-Match": tag})
		if st != 200 {
			t.Fatalf("a person's edit of %s in a --dir source: %d %s", p, st, body)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, p)); !strings.Contains(string(got), "By a person") {
			t.Fatalf("%s in the working tree: %q", p, got)
		}
		st, _, body = b.change("PUT", "/v1/agents/bot/files/"+p, `{"content":"lost?"}`, map[string]string{"If-Match": tag})
		var stale api.StaleEditBody
		if st != http.StatusPreconditionFailed || json.Unmarshal([]byte(body), &stale) != nil || !strings.Contains(stale.Content, "By a person") {
			t.Fatalf("a stale edit of %s: %d %s", p, st, body)
		}
	}
}

// TestConsolePersonEditUpstream: a follower of an upstream refuses a
// person's edit, saying why and what to do, and writes nothing.
func TestConsolePersonEditUpstream(t *testing.T) {
	host := startDaemon(t, daemon.Options{})
	host.push(t, newWorkTree(t, botFiles), "bot")
	f := startDaemon(t, daemon.Options{Upstream: host.remote + "/bot.git", Poll: time.Hour, APIListen: "127.0.0.1:0", Tokens: consoleTokens, People: consolePeople})
	b := newBrowser(t, "http://"+f.d.APIAddr())
	b.login("tok-ada")
	for _, p := range []string{"MEMORY.md", "SOUL.md"} {
		tag := b.etagOf("bot", p, "")
		st, _, body := b.change("PUT", "/v1/agents/bot/files/"+p, `{"content":"# Edited\n"}`, map[string]string{"If-Match": tag})
		if st < 400 || !strings.Contains(body, `"not_writable"`) || !strings.Contains(body, "clone of the upstream") {
			t.Fatalf("a person's edit of %s on a follower: %d %s, want a refusal saying what to do", p, st, body)
		}
		if b.etagOf("bot", p, "") != tag {
			t.Fatalf("%s changed after a refused edit", p)
		}
	}
}
