package agent_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/quirehq/quire/agent"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/internal/testenv"
)

func TestUnionEntries(t *testing.T) {
	base := "# 2026-01-02\n\n## 10:00\n\nfirst\n"
	ours := base + "\n## 10:05\n\nagent\n"
	theirs := base + "\n## 10:03\n\nperson\n"
	got := string(agent.UnionEntries([]byte(base), []byte(ours), []byte(theirs)))
	want := "# 2026-01-02\n\n## 10:00\n\nfirst\n\n## 10:05\n\nagent\n\n## 10:03\n\nperson\n"
	if got != want {
		t.Errorf("union\n%s\nwant\n%s", got, want)
	}
	// Both sides holding one entry keep it once.
	if got := string(agent.UnionEntries([]byte(base), []byte(ours), []byte(ours))); got != ours {
		t.Errorf("same sides: %q, want %q", got, ours)
	}
}

// The merge's answer to the daily-log table (testenv.DailyLogCases): a
// person's push (main) and an agent's write (live) each add the row's
// file, relative to the agent's directory, with an entry of their own;
// merged by the git endpoint with the agents' policy (MergeMain, as a
// daemon does at start), exactly the rows that are daily logs merge as a
// union of both entries and exactly the others conflict. For the agent
// at the root of the repository and for one in ada/.
func TestMergeDailyLogs(t *testing.T) {
	cases := testenv.DailyLogCases(t)
	for _, layout := range []struct {
		name  string
		dir   string            // the agent's directory, "" for the root
		files map[string]string // the repository before both sides write
	}{
		{"root agent", "", map[string]string{"AGENTS.md": "# Rules\n"}},
		{"agent in ada", "ada/", map[string]string{"README.md": "notes\n", "ada/agent.yaml": "name: ada\n", "ada/AGENTS.md": "# Rules\n"}},
	} {
		t.Run(layout.name, func(t *testing.T) {
			var logs, others []string
			for _, c := range cases {
				if c.IsLog() {
					logs = append(logs, layout.dir+c.Path)
				} else {
					others = append(others, layout.dir+c.Path)
				}
			}
			// Every row at once: the conflicts are the rows that are no log.
			_, err := mergeBothWrite(t, layout.files, append(slices.Clone(logs), others...))
			var mce *gitsync.MergeConflictError
			if !errors.As(err, &mce) {
				t.Fatalf("MergeMain of every row: %v, want a conflict on the rows that are no daily log", err)
			}
			var conflicts []string
			for _, c := range mce.Conflicts {
				conflicts = append(conflicts, c.Path)
			}
			sort.Strings(conflicts)
			sort.Strings(others)
			if !slices.Equal(conflicts, others) {
				t.Errorf("conflicting files\n got %q\nwant %q (the rows that are no daily log)", conflicts, others)
			}
			// The logs alone merge, each keeping both entries.
			live, err := mergeBothWrite(t, layout.files, logs)
			if err != nil {
				t.Fatalf("MergeMain of the daily logs: %v", err)
			}
			for _, p := range logs {
				got, err := live.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if want := entry("agent") + "\n" + entry("person"); string(got) != "# Log\n\n"+want {
					t.Errorf("%s merged as\n%s\nwant both entries, the agent's first", p, got)
				}
			}
		})
	}
}

// entry is a daily-log entry by who.
func entry(who string) string { return "## " + who + "\n\n" + who + " was here\n" }

// mergeBothWrite hosts a repository holding files on main and live, then
// commits paths on live as an agent writes and on main as a person pushes
// by file path (the endpoint does not see it), each with an entry of its
// own, and merges main into live as a daemon does at start. It returns
// live after the merge.
func mergeBothWrite(t *testing.T, files map[string]string, paths []string) (*gitsync.Snapshot, error) {
	t.Helper()
	dir := t.TempDir()
	h, err := gitsync.NewHost(dir, gitsync.HostOptions{Live: true, AllowCreate: true, Merge: agent.Merge})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	work := testenv.NewWorkTree(t, files, "first")
	testenv.Git(t, work, "push", "-q", srv.URL+"/ws.git", "main")
	r, err := h.Repository("ws")
	if err != nil {
		t.Fatal(err)
	}
	var writes []gitsync.FileWrite
	person := map[string]string{}
	for _, p := range paths {
		writes = append(writes, gitsync.FileWrite{Path: p, Content: []byte("# Log\n\n" + entry("agent"))})
		person[p] = "# Log\n\n" + entry("person")
	}
	agentSig := object.Signature{Name: "ada", Email: "ada@quire.invalid"}
	if _, err := r.Commit(context.Background(), gitsync.CommitRequest{Ref: "live", Author: agentSig, Message: "agent write", Writes: writes}); err != nil {
		t.Fatal(err)
	}
	testenv.WriteFiles(t, work, person)
	testenv.Git(t, work, "add", "-A")
	testenv.Git(t, work, "commit", "-q", "-m", "person")
	testenv.Git(t, work, "push", "-q", filepath.Join(dir, "ws.git"), "main")
	if _, err := r.MergeMain(context.Background()); err != nil {
		return nil, err
	}
	live, err := r.Snapshot("live")
	if err != nil {
		t.Fatal(err)
	}
	return live, nil
}
