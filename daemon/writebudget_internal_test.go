package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/prompt"
)

// BenchmarkWriteBudget is the budgets of a batch of 32 appends, each to
// another user's daily log of an agent with 1,000 users on a git
// snapshot: each read on a workspace of its own (perWrite: the request's
// deployment with the write applied, as a write a later one of its batch
// replaced still is) or on the workspace the batch shares (shared: on
// the tree its commit made).
func BenchmarkWriteBudget(b *testing.B) {
	dir := b.TempDir()
	repoDir := filepath.Join(dir, "r.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", repoDir).CombinedOutput(); err != nil {
		b.Fatal(err, string(out))
	}
	r, err := gitsync.Open(repoDir)
	if err != nil {
		b.Fatal(err)
	}
	files := map[string]string{
		"agent.yaml": "name: bot\ntype: predefined\nwrite_limit_bytes: 200\ntimezone: Europe/Lisbon\n",
		"AGENTS.md":  "# Agents\n\nBe brief.\n",
		"SOUL.md":    "# Soul\n\nCalm and exact. MARKER-ONE\n",
		"TOOLS.md":   "# Tools\n\nNone.\n",
		"USER.md":    "# User\n\nShared default.\n",
		"MEMORY.md":  "# Memory\n\nThe wifi password is on the fridge.\n",
	}
	var writes []gitsync.FileWrite
	for p, c := range files {
		writes = append(writes, gitsync.FileWrite{Path: p, Content: []byte(c)})
	}
	day := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	logOf := func(u, n int) []byte {
		return appendEntry([]byte(fmt.Sprintf("# 2026-03-01\n\n## 09:00\n\n**User:** u%04d\n\nentry %d\n", u, n)), day, "", fmt.Sprintf("u%04d", u), fmt.Sprintf("entry %d more", n))
	}
	for u := range 1000 {
		writes = append(writes,
			gitsync.FileWrite{Path: fmt.Sprintf("users/u%04d/USER.md", u), Content: []byte("# User\n\nShared default.\n")},
			gitsync.FileWrite{Path: fmt.Sprintf("users/u%04d/memory/2026-03-01.md", u), Content: logOf(u, 0)})
	}
	h, err := r.Commit(context.Background(), gitsync.CommitRequest{Ref: "refs/heads/live", Writes: writes, Message: "x", Author: object.Signature{Name: "a", Email: "a@b", When: time.Now()}})
	if err != nil {
		b.Fatal(err)
	}
	snap, err := r.SnapshotOf(h)
	if err != nil {
		b.Fatal(err)
	}
	ws, err := prompt.Open(snap, prompt.Options{})
	if err != nil {
		b.Fatal(err)
	}
	agents := ws.Agents()
	a := agents[0]
	tokens := prompt.NewTokenizer()
	wr := &writer{tokens: tokens, log: slog.New(slog.DiscardHandler)}
	depFS := &seedFS{base: snap, agents: agents}
	ref := agentRef{ag: &deployedAgent{agent: a}, src: &source{}, dep: &deployment{fsys: depFS}}
	const batch = 32
	batchWrites := func(i int) []gitsync.FileWrite {
		var ws []gitsync.FileWrite
		for j := range batch {
			u := (i*batch + j) % 1000
			ws = append(ws, gitsync.FileWrite{Path: fmt.Sprintf("users/u%04d/memory/2026-03-01.md", u), Content: logOf(u, i+1)})
		}
		return ws
	}
	b.Run("perWrite", func(b *testing.B) {
		for i := range b.N {
			for j, w := range batchWrites(i) {
				st := wr.budgetAfter(ref, depFS, fmt.Sprintf("u%04d", (i*batch+j)%1000), w.Path, w.Content, day)
				if st.Status == "" {
					b.Fatal("no status")
				}
			}
		}
	})
	b.Run("shared", func(b *testing.B) {
		for i := range b.N {
			ws := batchWrites(i)
			pf := newPendingFS(snap)
			pf.apply(ws)
			tree := newBatchTree(pf, agents, budgetOptions("", tokens))
			for j, w := range ws {
				st := wr.writeBudget(ref, tree, fmt.Sprintf("u%04d", (i*batch+j)%1000), w.Path, w.Content, day)
				if st.Status == "" {
					b.Fatal("no status")
				}
			}
		}
	})
}
