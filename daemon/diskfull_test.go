package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/internal/testenv"
)

// TestDiskFullAnswers507: with the repositories' file system full, an
// append answers 507 insufficient_storage naming the path (not 500
// internal), a push is refused naming it, and neither leaves a
// temporary pack; once space is freed, both work.
func TestDiskFullAnswers507(t *testing.T) {
	t.Parallel()
	disk := testenv.SmallDisk(t, 4<<20)
	repos := filepath.Join(disk, "repos")
	td := startDaemon(t, daemon.Options{ReposDir: repos})
	wt := newWorkTree(t, botFiles)
	td.push(t, wt, "bot")
	ctx := context.Background()
	waitFor(t, "bot deployed", func() bool {
		st, err := td.c.Status(ctx)
		return err == nil && len(st.Agents) == 1 && st.Agents[0].Deployed != ""
	})
	filler := testenv.Fill(t, disk)

	_, err := td.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: "a note while the disk is full"})
	if apiStatus(err) != 507 || api.AsError(err).Code != api.CodeInsufficientStorage ||
		!strings.Contains(err.Error(), "no space left on device writing "+filepath.Join(repos, "bot.git")+"/") {
		t.Fatalf("append on a full disk: %v (status %d), want 507 naming a path in the repository", err, apiStatus(err))
	}
	testenv.WriteFiles(t, wt, map[string]string{"memory/big.md": strings.Repeat("A long line of notes.\n", 20000)})
	git(t, wt, "add", "-A")
	git(t, wt, "commit", "-q", "-m", "big")
	out, err := gitMay(wt, "push", td.remote+"/bot.git", "main")
	if err == nil || !strings.Contains(out, "no space left on device writing "+filepath.Join(repos, "bot.git")) {
		t.Fatalf("push to a full disk: %v\n%s", err, out)
	}
	packs, _ := os.ReadDir(filepath.Join(repos, "bot.git", "objects", "pack"))
	for _, p := range packs {
		if strings.HasPrefix(p.Name(), "tmp_") || strings.HasPrefix(p.Name(), ".tmp-") {
			t.Errorf("a failed write left %s", p.Name())
		}
	}

	os.Remove(filler)
	if _, err := td.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: "a note once there is room"}); err != nil {
		t.Fatalf("append once there is room: %v", err)
	}
	td.push(t, wt, "bot")
}
