package daemon_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/internal/testenv"
)

// TestOperatorScenario: 8 clients x 50 memory appends and 20 new users'
// first prompts run while a person pushes 20 persona changes without ever
// pulling. Every push is accepted, every acknowledged append is in live
// exactly once, no prompt read wrote a commit, and the last persona
// change is served.
func TestOperatorScenario(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("400 appends and 20 pushes")
	}
	ctx := context.Background()
	day := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	td := startDaemon(t, daemon.Options{Now: func() time.Time { return day }})
	wt := newWorkTree(t, botFiles)
	td.push(t, wt, "bot")
	bare := filepath.Join(td.repos, "bot.git")

	const clients, each, newUsers, pushes = 8, 50, 20, 20
	var wg sync.WaitGroup
	var mu sync.Mutex
	acked := map[string]bool{}
	var errs []error
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				text := fmt.Sprintf("entry-%d-%d", c, i)
				_, err := td.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: text})
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					acked[text] = true
				}
				mu.Unlock()
			}
		}()
	}
	for u := range newUsers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := td.c.Prompt(ctx, "bot", api.PromptRequest{User: fmt.Sprintf("new-user-%d", u)})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			} else if !strings.Contains(p.Prompt, "Shared default.") {
				errs = append(errs, fmt.Errorf("new user %d's prompt lacks the seeded USER.md", u))
			}
		}()
	}
	var refused []string
	for i := range pushes {
		testenv.WriteFiles(t, wt, map[string]string{"SOUL.md": fmt.Sprintf("# Soul\n\nCalm and exact. PERSONA-%d\n", i)})
		git(t, wt, "commit", "-qam", fmt.Sprintf("persona %d", i))
		if out, err := gitMay(wt, "push", td.remote+"/bot.git", "main"); err != nil {
			refused = append(refused, out)
		}
	}
	wg.Wait()
	if len(refused) > 0 {
		t.Fatalf("%d of %d pushes refused:\n%s", len(refused), pushes, strings.Join(refused, "\n---\n"))
	}
	for _, err := range errs {
		t.Error(err)
	}
	if len(acked) != clients*each {
		t.Fatalf("%d appends acknowledged, want %d", len(acked), clients*each)
	}
	log := git(t, bare, "show", "live:memory/2026-11-22.md")
	for text := range acked {
		if n := strings.Count(log, text+"\n"); n != 1 {
			t.Errorf("%s is in live's daily log %d times, want once", text, n)
		}
	}
	if n := strings.Count(git(t, bare, "log", "--format=%B", "live", "--author=bot"), "memory entry"); n != clients*each {
		t.Errorf("%d appends recorded in live's commit messages, want %d", n, clients*each)
	}
	if users := git(t, bare, "ls-tree", "--name-only", "live", "users/"); strings.Contains(users, "new-user") {
		t.Errorf("a prompt read committed a user's files:\n%s", users)
	}
	if main, head := strings.TrimSpace(git(t, bare, "rev-parse", "main")), strings.TrimSpace(git(t, wt, "rev-parse", "HEAD")); main != head {
		t.Errorf("main is %s, want the person's last push %s", main, head)
	}
	p, err := td.c.Prompt(ctx, "bot", api.PromptRequest{})
	if err != nil || !strings.Contains(p.Prompt, fmt.Sprintf("PERSONA-%d", pushes-1)) {
		t.Fatalf("the last persona change is not served: %v", err)
	}
	if live := strings.TrimSpace(git(t, bare, "rev-parse", "live")); p.Commit != live {
		t.Errorf("the prompt names commit %s, want live's %s", p.Commit, live)
	}
}

// TestPushConflictWithAgent: a person and an agent changed the same lines
// of MEMORY.md; the push is refused naming the file, the lines and the
// way out, nothing moves; after pulling live, merging and pushing, it is
// accepted and served.
func TestPushConflictWithAgent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	td := startDaemon(t, daemon.Options{})
	wt := newWorkTree(t, botFiles)
	td.push(t, wt, "bot")
	url := td.remote + "/bot.git"
	f, err := td.c.ReadFile(ctx, "bot", "MEMORY.md", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := td.c.WriteFile(ctx, "bot", "MEMORY.md", "", f.ETag, []byte("# Memory\n\nThe wifi password is in the drawer.\n")); err != nil {
		t.Fatal(err)
	}
	before, _ := td.c.Prompt(ctx, "bot", api.PromptRequest{})
	testenv.WriteFiles(t, wt, map[string]string{"MEMORY.md": "# Memory\n\nThe wifi password is WIFI-PERSON.\n"})
	git(t, wt, "commit", "-qam", "person edits memory")
	out, err := gitMay(wt, "push", url, "main")
	if err == nil {
		t.Fatalf("conflicting push accepted:\n%s", out)
	}
	want := "! [remote rejected] main -> main (MEMORY.md: the agent changed these lines since your base; git pull --no-rebase " + url + " live, resolve, commit, push again)"
	if !strings.Contains(out, want) || !strings.Contains(out, "remote: error:   MEMORY.md: your line 3, live's line 3") {
		t.Fatalf("refusal:\n%s\nwant\n%s", out, want)
	}
	if after, _ := td.c.Prompt(ctx, "bot", api.PromptRequest{}); after.Commit != before.Commit {
		t.Fatal("a refused push changed what is served")
	}
	if _, err := gitMay(wt, "pull", "--no-rebase", "-q", url, "live"); err == nil {
		t.Fatal("pull of live should stop at the conflict")
	}
	testenv.WriteFiles(t, wt, map[string]string{"MEMORY.md": "# Memory\n\nThe wifi password is WIFI-RESOLVED.\n"})
	git(t, wt, "commit", "-qam", "merge live")
	if out, err := gitMay(wt, "push", url, "main"); err != nil {
		t.Fatalf("push after the merge refused:\n%s", out)
	}
	p, err := td.c.Prompt(ctx, "bot", api.PromptRequest{})
	if err != nil || !strings.Contains(p.Prompt, "WIFI-RESOLVED") {
		t.Fatalf("the resolution is not served: %v", err)
	}
}
