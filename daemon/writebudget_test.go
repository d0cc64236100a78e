package daemon_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
)

// TestAppendBudgetIsItsOwn: each of a user's concurrent appends, which
// group commits put in the same commits, is answered with the budget of
// the daily log it wrote, not of the one its commit holds after the
// appends that followed it in the batch.
func TestAppendBudgetIsItsOwn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	td := startDaemon(t, daemon.Options{})
	td.push(t, newWorkTree(t, botFiles), "bot")
	now := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	const n = 24
	answers := make([]api.WriteResponse, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			res, err := td.c.MemoryAppend(ctx, "bot", api.AppendRequest{User: "ann", Text: strings.Repeat("word ", i+1), Now: &now})
			if err != nil {
				t.Error(err)
			}
			answers[i] = res
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	log, err := td.c.ReadFile(ctx, "bot", "memory/2026-03-01.md", "ann")
	if err != nil {
		t.Fatal(err)
	}
	// The log as each append left it: up to the next entry's heading.
	chars := map[string]int{}
	text := log.Content
	for {
		chars[daemon.ETag([]byte(text))] = len(text)
		i := strings.LastIndex(text, "\n\n## ")
		if i < 0 {
			break
		}
		text = text[:i+1]
	}
	for i, res := range answers {
		want, ok := chars[res.ETag]
		if !ok {
			t.Fatalf("append %d: ETag %s is none of the log's versions", i, res.ETag)
		}
		if res.Budget.Status != api.BudgetFits || res.Budget.Chars != want {
			t.Errorf("append %d: budget %+v, want %d chars that fit", i, res.Budget, want)
		}
	}
}
