package daemon_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/prompt"
)

// TestFilesAPI: the files routes beside read and write — the listing (agent
// and user scope, sizes, ETags, kinds, a new user's seeds), DELETE under
// If-Match (a persona file's through a proposal), the report alone, daily
// logs append-only, and a body that is neither JSON nor Markdown refused
// with 415 and never written.
func TestFilesAPI(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	td := startDaemon(t, daemon.Options{})
	files := map[string]string{"users/alice/USER.md": "# User\n\nAlice.\n", "users/alice/memory/2020-01-02.md": "# 2020-01-02\n"}
	for k, v := range botFiles {
		files[k] = v
	}
	td.push(t, newWorkTree(t, files), "bot")
	waitFor(t, "bot to be deployed", func() bool { _, err := td.c.ReadFile(ctx, "bot", "MEMORY.md", ""); return err == nil })

	t.Run("list", func(t *testing.T) { testListFiles(t, td) })
	t.Run("delete", func(t *testing.T) { testDeleteFile(t, td) })
	t.Run("report", func(t *testing.T) {
		code, _, body := td.raw(t, http.MethodGet, "/v1/agents/bot/report?user=alice&mode=task", nil, "")
		var rep prompt.Report
		if code != http.StatusOK || json.Unmarshal([]byte(body), &rep) != nil {
			t.Fatalf("GET report: %d %s", code, body)
		}
		want, err := td.c.Prompt(ctx, "bot", api.PromptRequest{User: "alice", Mode: prompt.ModeTask})
		if err != nil || rep.User != "alice" || rep.Mode != prompt.ModeTask || len(rep.Files) != len(want.Report.Files) || rep.InjectedChars != want.Report.InjectedChars {
			t.Errorf("GET report = %+v, want the prompt route's report %+v (%v)", rep, want.Report, err)
		}
		if code, _, body := td.raw(t, http.MethodGet, "/v1/agents/bot/report?mode=lean", nil, ""); code != http.StatusBadRequest {
			t.Errorf("GET report?mode=lean: %d %s", code, body)
		}
	})
	t.Run("append-only logs", func(t *testing.T) {
		code, _, body := td.raw(t, http.MethodPut, "/v1/agents/bot/files/memory/2020-01-01.md", http.Header{"If-Match": {"*"}}, "rewritten")
		if code != http.StatusUnprocessableEntity || !strings.Contains(body, "append-only") || !strings.Contains(body, "memory/append") {
			t.Errorf("PUT of a daily log: %d %s, want 422 pointing at memory/append", code, body)
		}
	})
	t.Run("415", func(t *testing.T) { testMediaTypes(t, td) })
}

func testListFiles(t *testing.T, td *testDaemon) {
	ctx := context.Background()
	l, err := td.c.ListFiles(ctx, "bot", "")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, f := range l.Files {
		kinds[f.Path] = f.Kind
		if strings.HasPrefix(f.Path, "users/") {
			t.Errorf("the agent's listing holds a user's file %s", f.Path)
		}
	}
	want := map[string]string{"agent.yaml": "config", "SOUL.md": "persona", "USER.md": "per_user", "MEMORY.md": "memory",
		"memory/2020-01-01.md": "daily_log", "skills/greeting/SKILL.md": "skill"}
	for p, k := range want {
		if kinds[p] != k {
			t.Errorf("%s listed as %q, want %q (listing %v)", p, kinds[p], k, kinds)
		}
	}
	mem, err := td.c.ReadFile(ctx, "bot", "MEMORY.md", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range l.Files {
		if f.Path == "MEMORY.md" && (f.ETag != mem.ETag || f.Size != int64(len(mem.Content)) || l.Commit != mem.Commit) {
			t.Errorf("MEMORY.md listed as %+v at %s, read as %d bytes %s at %s", f, l.Commit, len(mem.Content), mem.ETag, mem.Commit)
		}
	}
	alice, err := td.c.ListFiles(ctx, "bot", "alice")
	if err != nil || len(alice.Files) != 2 || alice.Files[0].Path != "users/alice/USER.md" || alice.Files[1].Kind != "daily_log" {
		t.Errorf("alice's listing: %+v %v", alice, err)
	}
	fresh, err := td.c.ListFiles(ctx, "bot", "newcomer")
	if err != nil || len(fresh.Files) != 2 || !fresh.Files[0].Seed || fresh.Files[0].Path != "users/newcomer/BOOTSTRAP.md" || fresh.Files[1].Path != "users/newcomer/USER.md" {
		t.Errorf("a new user's listing: %+v %v, want their two seeds", fresh, err)
	}
	if seed, err := td.c.ReadFile(ctx, "bot", "USER.md", "newcomer"); err != nil || seed.ETag != fresh.Files[1].ETag {
		t.Errorf("a seed's listed ETag differs from its read's: %+v %v", seed, err)
	}
}

func testDeleteFile(t *testing.T, td *testDaemon) {
	ctx := context.Background()
	w, err := td.c.WriteFile(ctx, "bot", "memory/notes.md", "", "*", []byte("# Notes\n"))
	if err != nil {
		t.Fatal(err)
	}
	if code, _, body := td.raw(t, http.MethodDelete, "/v1/agents/bot/files/memory/notes.md", nil, ""); code != http.StatusPreconditionRequired {
		t.Errorf("DELETE without If-Match: %d %s", code, body)
	}
	if _, err := td.c.DeleteFile(ctx, "bot", "memory/notes.md", "", `"stale"`); apiStatus(err) != http.StatusConflict {
		t.Errorf("DELETE with a stale ETag: %v", err)
	}
	del, err := td.c.DeleteFile(ctx, "bot", "memory/notes.md", "", w.ETag)
	if err != nil || !del.Deleted || del.Branch != "live" {
		t.Fatalf("DELETE: %+v %v", del, err)
	}
	if _, err := td.c.ReadFile(ctx, "bot", "memory/notes.md", ""); apiStatus(err) != http.StatusNotFound {
		t.Errorf("read after DELETE: %v", err)
	}
	if _, err := td.c.DeleteFile(ctx, "bot", "memory/2020-01-01.md", "", "*"); apiStatus(err) != http.StatusUnprocessableEntity {
		t.Errorf("DELETE of a daily log: %v, want 422 (append-only)", err)
	}
	soul, err := td.c.ReadFile(ctx, "bot", "SOUL.md", "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := td.c.DeleteFile(ctx, "bot", "SOUL.md", "", soul.ETag)
	if err != nil || !strings.HasPrefix(p.Branch, "proposals/bot/") {
		t.Errorf("DELETE of SOUL.md: %+v %v, want a proposal", p, err)
	}
	if still, err := td.c.ReadFile(ctx, "bot", "SOUL.md", ""); err != nil || still.ETag != soul.ETag {
		t.Errorf("a proposed deletion changed what is served: %v", err)
	}
}

func testMediaTypes(t *testing.T, td *testDaemon) {
	ctx := context.Background()
	before, err := td.c.ReadFile(ctx, "bot", "MEMORY.md", "")
	if err != nil {
		t.Fatal(err)
	}
	for name, ct := range map[string][]string{"curl -d": {"application/x-www-form-urlencoded"}, "none": {""}, "plain": {"text/plain"}} {
		code, _, body := td.raw(t, http.MethodPut, "/v1/agents/bot/files/MEMORY.md", http.Header{"If-Match": {before.ETag}, "Content-Type": ct}, `{"content":"# Memory\n\nOverwritten.\n"}`)
		if code != http.StatusUnsupportedMediaType || !strings.Contains(body, "unsupported_media_type") {
			t.Errorf("%s: %d %s, want 415", name, code, body)
		}
	}
	if after, err := td.c.ReadFile(ctx, "bot", "MEMORY.md", ""); err != nil || after.Content != before.Content {
		t.Errorf("a refused body was written: %q %v", after.Content, err)
	}
	code, _, body := td.raw(t, http.MethodPut, "/v1/agents/bot/files/MEMORY.md", http.Header{"If-Match": {before.ETag}, "Content-Type": {"application/json; charset=utf-8"}}, `{"content":"# Memory\n\nVia JSON.\n"}`)
	if after, err := td.c.ReadFile(ctx, "bot", "MEMORY.md", ""); code != http.StatusOK || err != nil || after.Content != "# Memory\n\nVia JSON.\n" {
		t.Errorf("a JSON write: %d %s, then %q %v", code, body, after.Content, err)
	}
}
