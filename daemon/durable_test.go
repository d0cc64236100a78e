package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quirehq/quire/daemon"
)

// TestBrokenRefInStatus: a hosted repository whose main ref file is
// empty (what a crash of an older version left) is an error in
// /v1/status naming the ref, not an empty repository; the owner's push
// replaces it, and status shows that push and the commit it stored.
func TestBrokenRefInStatus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	td := startDaemon(t, daemon.Options{})
	wt := newWorkTree(t, botFiles)
	td.push(t, wt, "bot")
	td.stop()
	for _, ref := range []string{"main", "live"} {
		if err := os.WriteFile(filepath.Join(td.repos, "bot.git", "refs", "heads", ref), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	td2 := startDaemon(t, daemon.Options{ReposDir: td.repos})
	st, err := td2.c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Agents) != 1 || !strings.Contains(st.Agents[0].LastError, "refs/heads/live is broken") {
		t.Fatalf("status with a broken main: %+v", st.Agents)
	}

	out := td2.push(t, wt, "bot")
	head := strings.TrimSpace(git(t, wt, "rev-parse", "HEAD"))
	if !strings.Contains(out, head) {
		t.Errorf("the push output does not name the commit %s:\n%s", head, out)
	}
	st, err = td2.c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Agents) != 1 || st.Agents[0].Deployed != head || st.Agents[0].LastError != "" {
		t.Fatalf("status after the fixing push: %+v", st.Agents)
	}
	if len(st.Pushes) != 1 || st.Pushes[0].Repo != "bot" || st.Pushes[0].Result != "ok" ||
		len(st.Pushes[0].Refs) != 1 || st.Pushes[0].Refs[0].New != head || st.Pushes[0].Refs[0].Name != "refs/heads/main" {
		t.Fatalf("status pushes: %+v", st.Pushes)
	}
}
