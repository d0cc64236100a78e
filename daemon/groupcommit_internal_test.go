package daemon

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/prompt"
)

func batchReq(ctx context.Context, user, msg string, build buildFunc) *writeReq {
	a := &prompt.Agent{Name: "bot", Dir: "."}
	return &writeReq{ctx: ctx, ref: agentRef{ag: &deployedAgent{agent: a}}, user: user, message: msg, build: build}
}

// appendTo appends line to p as the tree it is built on holds it.
func appendTo(p, line string) buildFunc {
	return func(fsys fs.FS) ([]gitsync.FileWrite, error) {
		cur, _ := fs.ReadFile(fsys, p)
		return []gitsync.FileWrite{{Path: p, Content: append(cur, line+"\n"...)}}, nil
	}
}

// TestApplyBatch: each write in a batch sees the ones before it; a write
// whose build fails, or whose caller went away, is left out and carries
// its own error; the batch's changes are each path's final state.
func TestApplyBatch(t *testing.T) {
	base := fstest.MapFS{
		"AGENTS.md":            {Data: []byte("# Agents\n")},
		"memory/2026-01-01.md": {Data: []byte("old\n")},
		"gone.md":              {Data: []byte("x\n")},
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	ctx := context.Background()
	refused := errors.New("refused")
	var sawFirst bool
	batch := []*writeReq{
		batchReq(ctx, "", "a1", appendTo("memory/2026-01-01.md", "one")),
		batchReq(ctx, "", "a2", appendTo("memory/2026-01-01.md", "two")),
		batchReq(ctx, "", "bad", func(fs.FS) ([]gitsync.FileWrite, error) { return nil, refused }),
		batchReq(gone, "", "late", appendTo("memory/2026-01-01.md", "never")),
		batchReq(ctx, "", "new", appendTo("notes/new.md", "n")),
		batchReq(ctx, "", "sees new", func(fsys fs.FS) ([]gitsync.FileWrite, error) {
			// The directory a write before created is there.
			if fi, err := fs.Stat(fsys, "notes"); err == nil && fi.IsDir() {
				es, err := fs.ReadDir(fsys, "notes")
				sawFirst = err == nil && len(es) == 1 && es[0].Name() == "new.md"
			}
			return nil, nil
		}),
		batchReq(ctx, "", "tmp", appendTo("tmp.md", "t")),
		batchReq(ctx, "", "rm tmp", func(fs.FS) ([]gitsync.FileWrite, error) {
			return []gitsync.FileWrite{{Path: "tmp.md", Delete: true}}, nil
		}),
		batchReq(ctx, "", "rm gone", func(fs.FS) ([]gitsync.FileWrite, error) {
			return []gitsync.FileWrite{{Path: "gone.md", Delete: true}}, nil
		}),
		batchReq(ctx, "", "after rm", func(fsys fs.FS) ([]gitsync.FileWrite, error) {
			if _, err := fs.ReadFile(fsys, "gone.md"); !errors.Is(err, fs.ErrNotExist) {
				return nil, errors.New("a deleted file is still read")
			}
			return nil, nil
		}),
	}
	changes := applyBatch(base, batch, nil)
	got := map[string]string{}
	for _, w := range changes {
		if w.Delete {
			got[w.Path] = "<deleted>"
		} else {
			got[w.Path] = string(w.Content)
		}
	}
	want := map[string]string{
		"memory/2026-01-01.md": "old\none\ntwo\n",
		"notes/new.md":         "n\n",
		"gone.md":              "<deleted>",
	}
	if len(got) != len(want) {
		t.Errorf("changes %v, want %v", got, want)
	}
	for p, c := range want {
		if got[p] != c {
			t.Errorf("%s = %q, want %q", p, got[p], c)
		}
	}
	if !errors.Is(batch[2].err, refused) || batch[2].writes != nil {
		t.Errorf("the failing write: err %v, writes %v", batch[2].err, batch[2].writes)
	}
	if !errors.Is(batch[3].err, context.Canceled) {
		t.Errorf("the abandoned write: err %v, want context.Canceled", batch[3].err)
	}
	if !sawFirst {
		t.Error("a write did not see the directory and file a write before it created")
	}
	if batch[9].err != nil {
		t.Error(batch[9].err)
	}
}

// TestApplyBatchSeeds: a new user's first write stores their seed files
// once, even when two writes for that user share a batch.
func TestApplyBatchSeeds(t *testing.T) {
	base := fstest.MapFS{"AGENTS.md": {Data: []byte("# Agents\n")}, "USER.md": {Data: []byte("Shared default.\n")}}
	ctx := context.Background()
	a := &prompt.Agent{Name: "bot", Dir: "."}
	dir, err := a.UserDir("u1")
	if err != nil {
		t.Fatal(err)
	}
	log := dir + "/memory/2026-01-01.md"
	batch := []*writeReq{
		batchReq(ctx, "u1", "one", appendTo(log, "one")),
		batchReq(ctx, "u1", "two", appendTo(log, "two")),
	}
	changes := applyBatch(base, batch, nil)
	seen := map[string]int{}
	for _, w := range changes {
		seen[w.Path]++
	}
	if seen[dir+"/USER.md"] != 1 || seen[log] != 1 {
		t.Errorf("changes %v: want the seeds once and the log once", seen)
	}
	if len(batch[1].writes) != 1 {
		t.Errorf("the second write carried %d files, want only its log (the seeds came with the first)", len(batch[1].writes))
	}
}

func TestBatchMessage(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	one := batchReq(ctx, "alice", "bot: memory entry in memory/2026-01-01.md", nil)
	one.writes = []gitsync.FileWrite{{Path: "x"}}
	sig, user, msg := batchMessage([]*writeReq{one}, now)
	if sig.Name != "bot" || user != "alice" || msg != one.message {
		t.Errorf("single write: %q %q %q", sig.Name, user, msg)
	}
	two := batchReq(ctx, "bob", "bot: write MEMORY.md", nil)
	two.writes = []gitsync.FileWrite{{Path: "y"}}
	failed := batchReq(ctx, "carol", "bot: failed", nil)
	failed.err = errors.New("no")
	sig, user, msg = batchMessage([]*writeReq{one, failed, two}, now)
	for _, want := range []string{"bot: 2 writes\n", "- " + one.message + "\n", "- " + two.message + "\n", "Quire-User: alice\n", "Quire-User: bob\n"} {
		if !strings.Contains(msg, want) {
			t.Errorf("batch message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "carol") || user != "" || sig.Name != "bot" {
		t.Errorf("batch message %q user %q author %q", msg, user, sig.Name)
	}
}

// TestApplyBatchKeys: a write whose key live holds is answered with that
// commit and not applied; a second write of the batch with the key of an
// earlier one rides on it; a write its caller gave up is left out; once
// the commit is made, each gets its answer.
func TestApplyBatchKeys(t *testing.T) {
	ctx := context.Background()
	base := fstest.MapFS{"memory/2026-01-01.md": {Data: []byte("old\n")}}
	log := "memory/2026-01-01.md"
	keyed := func(id, line string) *writeReq {
		r := batchReq(ctx, "", line, appendTo(log, line))
		r.key = gitsync.WriteKey{ID: id, Path: log}
		return r
	}
	landed := keyed("bot::landed", "landed")
	first := keyed("bot::twice", "twice")
	copied := keyed("bot::twice", "twice")
	gone := keyed("bot::gone", "gone")
	gone.state.Store(reqAbandoned)
	plain := keyed("", "plain")
	batch := []*writeReq{landed, first, copied, gone, plain}
	known := func(id string) (keyHit, bool) {
		if id == "bot::landed" {
			return keyHit{commit: "c0", path: log}, true
		}
		return keyHit{}, false
	}
	changes := applyBatch(base, batch, known)
	if len(changes) != 1 || string(changes[0].Content) != "old\ntwice\nplain\n" {
		t.Fatalf("changes %+v, want the log with twice and plain once each", changes)
	}
	if landed.replay == nil || landed.replay.commit != "c0" || landed.writes != nil {
		t.Errorf("the write live holds: replay %+v, writes %v", landed.replay, landed.writes)
	}
	if copied.dupOf != first || copied.writes != nil {
		t.Errorf("the copy: dupOf %p (first %p), writes %v", copied.dupOf, first, copied.writes)
	}
	if gone.err == nil || gone.writes != nil {
		t.Errorf("the abandoned write: err %v, writes %v", gone.err, gone.writes)
	}
	if keys := batchKeys(batch); len(keys) != 1 || keys[0].ID != "bot::twice" {
		t.Errorf("the commit's keys: %+v, want bot::twice only", keys)
	}
	for _, r := range []*writeReq{landed, first, copied, plain} {
		if r.state.Load() != reqClaimed {
			t.Errorf("write %q is not claimed: its caller could be told nothing was written", r.message)
		}
	}

	wr := &writer{log: slog.New(slog.DiscardHandler), events: &broker{}, writeTimeout: time.Second}
	s := &source{kind: kindRepo, name: "bot"}
	wr.settle(s, batch, "c1", "live", nil)
	want := map[*writeReq]string{landed: "c0", first: "c1", copied: "c1", plain: "c1"}
	for r, c := range want {
		if r.err != nil || r.commit != c || r.branch != "live" {
			t.Errorf("write %q answered %q on %q (%v), want %s on live", r.message, r.commit, r.branch, r.err, c)
		}
	}
	if copied.replay == nil || copied.replay.commit != "c1" {
		t.Errorf("the copy is not answered as a retry: %+v", copied.replay)
	}
	if e := api.AsError(gone.err); e.Code != api.CodeWriteTimeout {
		t.Errorf("the abandoned write answered %v, want write_timeout", gone.err)
	}
	if h, ok := s.writes.keys.lookup("bot::twice"); !ok || h.commit != "c1" {
		t.Errorf("the index has bot::twice at %+v, %v", h, ok)
	}
}

// TestGather: the next batch waits until as many writes are queued as
// the last one answered, or until the last commit's time (at most
// maxGather) passed since; not after a pause, nor before a first batch.
func TestGather(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		last     int
		answered time.Time
		queued   int  // queued before gather
		arriving int  // queued while it may wait
		atOnce   bool // it returns without waiting out its time
	}{
		{"the writers are back", 3, time.Now(), 3, 0, true},
		{"they come back while it waits", 3, time.Now(), 1, 2, true},
		{"one does not come back", 3, time.Now(), 2, 0, false},
		{"after a pause", 3, time.Now().Add(-time.Hour), 0, 0, true},
		{"a first batch", 0, time.Time{}, 1, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var q writeQueue
			q.last, q.answered, q.took = tt.last, tt.answered, time.Hour
			if tt.atOnce {
				// Its time never runs out: a gather that waits for it
				// when it should not never returns.
				q.after = func(time.Duration) <-chan time.Time { return nil }
			}
			for range tt.queued {
				q.push(batchReq(ctx, "", "w", nil))
			}
			type result struct {
				n       int
				elapsed time.Duration
			}
			done := make(chan result)
			go func() {
				q.gather()
				q.mu.Lock()
				defer q.mu.Unlock()
				done <- result{len(q.reqs), time.Since(tt.answered)}
			}()
			for range tt.arriving {
				q.push(batchReq(ctx, "", "w", nil))
			}
			var r result
			select {
			case r = <-done:
			case <-time.After(time.Minute): // only when broken: a hang made a failure
				t.Fatalf("gather did not return with %d writes queued of %d expected", tt.queued+tt.arriving, tt.last)
			}
			if r.n < tt.last && r.elapsed < maxGather {
				t.Errorf("gather returned %v after the last batch with %d writes queued, want %d or %v", r.elapsed, r.n, tt.last, maxGather)
			}
		})
	}
}

// TestAnswerExpects: a batch answered while other writes queued makes
// the next batch expect both (the answered writers come back), so a
// stream of writers is not split into batches that take turns; never
// more than maxBatch.
func TestAnswerExpects(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name            string
		answered, queue int
		want            int
	}{
		{"none queued meanwhile", 3, 0, 3},
		{"half the writers queued meanwhile", 16, 16, 32},
		{"more than a batch", maxBatch, 10, maxBatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var q writeQueue
			var batch []*writeReq
			for range tt.answered {
				r := batchReq(ctx, "", "w", nil)
				r.done = make(chan struct{})
				batch = append(batch, r)
			}
			for range tt.queue {
				q.push(batchReq(ctx, "", "w", nil))
			}
			q.answer(batch, time.Millisecond)
			if q.last != tt.want {
				t.Errorf("the next batch expects %d writes, want %d", q.last, tt.want)
			}
			for _, r := range batch {
				select {
				case <-r.done:
				default:
					t.Fatal("a write of the batch is not answered")
				}
			}
		})
	}
}
