package gitsync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

var agentSig = object.Signature{Name: "ada", Email: "ada@quire.invalid"}

// agentWrite commits files on live the way the daemon does.
func agentWrite(t testing.TB, r *Repository, files map[string]string) plumbing.Hash {
	t.Helper()
	var ws []FileWrite
	for p, c := range files {
		ws = append(ws, FileWrite{Path: p, Content: []byte(c)})
	}
	h, err := r.Commit(context.Background(), CommitRequest{Ref: "live", Author: agentSig, Message: "agent write", Writes: ws})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestLiveBranch(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var events []Event
	h, url, dir := testHost(t, HostOptions{Live: true, AfterPush: func(_ context.Context, e Event, _ io.Writer) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}})
	bare := filepath.Join(dir, "ws.git")
	repoURL := url + "/ws.git"
	memory := "# Memory\n\nline two\nline three\nline four\n"
	src := newWorkRepo(t, map[string]string{"AGENTS.md": "v0\n", "MEMORY.md": memory})
	git(t, src, "push", "-q", repoURL, "main")
	if m, l := git(t, bare, "rev-parse", "main"), git(t, bare, "rev-parse", "live"); m != l {
		t.Fatalf("a new repository's live %s should start at main %s", l, m)
	}
	r, err := h.Repository("ws")
	if err != nil {
		t.Fatal(err)
	}
	person := clone(t, repoURL)

	// The agent writes on live; the person pushes without pulling.
	oldLive := agentWrite(t, r, map[string]string{
		"MEMORY.md":            "# Memory\n\nline two (agent)\nline three\nline four\n",
		"memory/2026-01-02.md": "# 2026-01-02\n\n## 10:00\n\nagent entry\n",
	})
	commitFiles(t, person, map[string]string{"AGENTS.md": "v1\n", "memory/2026-01-02.md": "# 2026-01-02\n\n## 09:00\n\nperson entry\n"}, "persona v1")
	if out, err := gitTry(person, "push", "origin", "main"); err != nil {
		t.Fatalf("push to main with only agent writes in the way refused:\n%s", out)
	}
	mainHash := git(t, person, "rev-parse", "HEAD")
	if got := git(t, bare, "rev-parse", "main"); got != mainHash {
		t.Errorf("main at %s, want the pushed %s", got, mainHash)
	}
	parents := strings.Fields(git(t, bare, "log", "-1", "--format=%P", "live"))
	if len(parents) != 2 || parents[0] != oldLive.String() || parents[1] != mainHash {
		t.Errorf("live's parents %v, want [old live %s, new main %s]", parents, oldLive, mainHash)
	}
	if got := git(t, bare, "show", "live:AGENTS.md"); got != "v1" {
		t.Errorf("live AGENTS.md %q, want the person's v1", got)
	}
	if got := git(t, bare, "show", "live:MEMORY.md"); !strings.Contains(got, "line two (agent)") {
		t.Errorf("live MEMORY.md lost the agent's line:\n%s", got)
	}
	log := git(t, bare, "show", "live:memory/2026-01-02.md")
	if !strings.Contains(log, "agent entry") || !strings.Contains(log, "person entry") {
		t.Errorf("the daily log is not the union of both sides:\n%s", log)
	}
	mu.Lock()
	last := events[len(events)-1]
	mu.Unlock()
	movedLive := false
	for _, u := range last.Refs {
		movedLive = movedLive || u.Name == LiveRef
	}
	if !movedLive {
		t.Errorf("the push event %+v does not report live", last.Refs)
	}

	// A real conflict: both changed line two of MEMORY.md.
	agentWrite(t, r, map[string]string{"MEMORY.md": "# Memory\n\nline two (agent again)\nline three\nline four\n"})
	commitFiles(t, person, map[string]string{"MEMORY.md": "# Memory\n\nline two (person)\nline three\nline four\n"}, "person edits memory")
	beforeMain, beforeLive := git(t, bare, "rev-parse", "main"), git(t, bare, "rev-parse", "live")
	out, err := gitTry(person, "push", "origin", "main")
	if err == nil {
		t.Fatalf("a conflicting push was accepted:\n%s", out)
	}
	want := "! [remote rejected] main -> main (MEMORY.md: the agent changed these lines since your base; git pull --no-rebase " + repoURL + " live, resolve, commit, push again)"
	if !strings.Contains(out, want) {
		t.Errorf("refusal:\n%s\nwant a line\n%s", out, want)
	}
	if !strings.Contains(out, "remote: error:   MEMORY.md: your line 3, live's line 3") {
		t.Errorf("no remote: line names the file and lines:\n%s", out)
	}
	hint := "remote: error: to resolve: git pull --no-rebase " + repoURL + " live, fix the conflicts, git commit -a --no-edit, push again"
	if !strings.Contains(out, hint) {
		t.Errorf("refusal:\n%s\nwant a line\n%s", out, hint)
	}
	if m, l := git(t, bare, "rev-parse", "main"), git(t, bare, "rev-parse", "live"); m != beforeMain || l != beforeLive {
		t.Errorf("a refused push moved main or live")
	}
	// Resolution as the hint says: pull live, fix, commit, push.
	if out, err := gitTry(person, "pull", "--no-rebase", "-q", repoURL, "live"); err == nil {
		t.Fatalf("pull should report the conflict:\n%s", out)
	}
	writeFiles(t, person, map[string]string{"MEMORY.md": "# Memory\n\nline two (both)\nline three\nline four\n"})
	git(t, person, "commit", "-q", "-a", "--no-edit")
	if out, err := gitTry(person, "push", "origin", "main"); err != nil {
		t.Fatalf("push after merging live refused:\n%s", out)
	}
	if got := git(t, bare, "show", "live:MEMORY.md"); !strings.Contains(got, "line two (both)") {
		t.Errorf("live after the resolution:\n%s", got)
	}

	// Forced pushes, deletions and live by hand.
	git(t, person, "fetch", "-q", "origin")
	if out, err := gitTry(person, "push", "origin", "--force", "HEAD~1:main"); err == nil || !strings.Contains(out, "non-fast-forward") {
		t.Errorf("a forced push to main was not refused as non-fast-forward:\n%s", out)
	}
	for _, ref := range []string{"main", "live"} {
		if out, err := gitTry(person, "push", "origin", ":"+ref); err == nil || !strings.Contains(out, "deleting "+ref+" is not allowed") {
			t.Errorf("deleting %s was not refused:\n%s", ref, out)
		}
	}
	git(t, person, "checkout", "-q", "-b", "mylive", "origin/live")
	commitFiles(t, person, map[string]string{"MEMORY.md": "# Memory\n\nfixed by hand\n"}, "hand edit")
	if out, err := gitTry(person, "push", "origin", "mylive:live"); err != nil {
		t.Errorf("a fast-forward push to live refused:\n%s", out)
	}
	if out, err := gitTry(person, "push", "origin", "--force", "mylive~2:live"); err == nil || !strings.Contains(out, "live only moves forward") {
		t.Errorf("a non-fast-forward push to live was not refused:\n%s", out)
	}
	git(t, bare, "fsck", "--strict")
}

func TestLiveAllowNonFastForward(t *testing.T) {
	t.Parallel()
	_, url, dir := testHost(t, HostOptions{Live: true, AllowNonFastForward: true})
	bare := filepath.Join(dir, "ws.git")
	src := newWorkRepo(t, map[string]string{"AGENTS.md": "v0\n"})
	git(t, src, "push", "-q", url+"/ws.git", "main")
	commitFiles(t, src, map[string]string{"AGENTS.md": "v1\n"}, "v1")
	git(t, src, "push", "-q", url+"/ws.git", "main")
	liveBefore := git(t, bare, "rev-parse", "live")
	if out, err := gitTry(src, "push", "--force", url+"/ws.git", "HEAD~1:main"); err != nil {
		t.Fatalf("forced push refused with AllowNonFastForward:\n%s", out)
	}
	// live keeps what it had: it is the first parent of its new value or
	// unchanged.
	if out, err := gitTry(bare, "merge-base", "--is-ancestor", liveBefore, "live"); err != nil {
		t.Errorf("live lost its history after a forced push to main: %s", out)
	}
}

// TestPushWithoutSideband pushes with a client that does not ask for
// side-band-64k: the push must still reach AfterPush (be deployed).
func TestPushWithoutSideband(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	called := 0
	_, url, _ := testHost(t, HostOptions{Live: true, AfterPush: func(_ context.Context, e Event, _ io.Writer) {
		mu.Lock()
		called++
		mu.Unlock()
	}})
	src := newWorkRepo(t, map[string]string{"AGENTS.md": "v0\n"})
	git(t, src, "push", "-q", url+"/ws.git", "main")
	old := git(t, src, "rev-parse", "HEAD")
	next := commitFiles(t, src, map[string]string{"AGENTS.md": "v1\n"}, "v1")
	cmd := exec.Command("git", "pack-objects", "--stdout", "--thin", "-q", "--revs")
	cmd.Dir = src
	cmd.Stdin = strings.NewReader(next + "\n^" + old + "\n")
	pack, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	body.Write(appendPkt(nil, fmt.Sprintf("%s %s refs/heads/main\x00report-status\n", old, next)))
	body.WriteString("0000")
	body.Write(pack)
	resp, err := http.Post(url+"/ws.git/git-receive-pack", "application/x-git-receive-pack-request", &body)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "ok refs/heads/main") {
		t.Fatalf("push refused: %q", b)
	}
	mu.Lock()
	defer mu.Unlock()
	if called != 2 {
		t.Errorf("AfterPush ran %d times, want 2 (the push without side-band too)", called)
	}
}

// TestMergeMain: main moved outside the endpoint (a push by file path)
// is merged into live, keeping the agent's writes; a conflict is an error
// naming the file and nothing moves.
func TestMergeMain(t *testing.T) {
	t.Parallel()
	h, url, dir := testHost(t, HostOptions{Live: true})
	bare := filepath.Join(dir, "ws.git")
	src := newWorkRepo(t, map[string]string{"AGENTS.md": "v0\n", "MEMORY.md": "a\nb\nc\n"})
	git(t, src, "push", "-q", url+"/ws.git", "main")
	r, err := h.Repository("ws")
	if err != nil {
		t.Fatal(err)
	}
	oldLive := agentWrite(t, r, map[string]string{"MEMORY.md": "a\nB (agent)\nc\n"})
	commitFiles(t, src, map[string]string{"AGENTS.md": "v1\n"}, "v1")
	git(t, src, "push", "-q", bare, "main")
	m, err := r.MergeMain(context.Background())
	if err != nil || m.IsZero() {
		t.Fatalf("MergeMain: %v %v", m, err)
	}
	if got := git(t, bare, "rev-parse", "live^1"); got != oldLive.String() {
		t.Errorf("live's first parent %s, want the old live %s", got, oldLive)
	}
	if a, mem := git(t, bare, "show", "live:AGENTS.md"), git(t, bare, "show", "live:MEMORY.md"); a != "v1" || !strings.Contains(mem, "B (agent)") {
		t.Errorf("merged live: AGENTS.md %q, MEMORY.md %q", a, mem)
	}
	if m, err := r.MergeMain(context.Background()); err != nil || !m.IsZero() {
		t.Errorf("a second MergeMain moved live: %v %v", m, err)
	}
	// A conflict.
	agentWrite(t, r, map[string]string{"MEMORY.md": "a\nB (agent again)\nc\n"})
	commitFiles(t, src, map[string]string{"MEMORY.md": "a\nB (person)\nc\n"}, "person")
	git(t, src, "push", "-q", bare, "main")
	before := git(t, bare, "rev-parse", "live")
	_, err = r.MergeMain(context.Background())
	var mce *MergeConflictError
	if !errors.As(err, &mce) || mce.Conflicts[0].Path != "MEMORY.md" {
		t.Fatalf("conflicting MergeMain: %v", err)
	}
	if git(t, bare, "rev-parse", "live") != before {
		t.Error("a conflicting merge moved live")
	}
}
