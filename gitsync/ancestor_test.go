package gitsync

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// TestIsAncestor: ancestry on a history with a side branch, a merge and
// commit dates that lie (a merge dated years before its parents, a side
// commit dated in the future): the answer never depends on the dates.
func TestIsAncestor(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := func(date string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com",
			"GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	commit := func(date, msg string) string {
		run(date, "commit", "-q", "--allow-empty", "-m", msg)
		return run(date, "rev-parse", "HEAD")
	}
	run("2026-01-01T00:00:00Z", "init", "-q", "-b", "main")
	c1 := commit("2026-01-01T00:00:00Z", "c1")
	c2 := commit("2026-01-02T00:00:00Z", "c2")
	c3 := commit("2026-01-03T00:00:00Z", "c3")
	run("2026-01-01T00:00:00Z", "checkout", "-q", "-b", "side", c1)
	x1 := commit("2030-01-01T00:00:00Z", "x1 from the future")
	x2 := commit("2026-01-02T12:00:00Z", "x2")
	run("2026-01-01T00:00:00Z", "checkout", "-q", "main")
	run("2000-01-01T00:00:00Z", "merge", "-q", "--no-ff", "-m", "m dated in the past", "side")
	m := run("2000-01-01T00:00:00Z", "rev-parse", "HEAD")
	c4 := commit("2026-01-04T00:00:00Z", "c4")
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		a, b string
		want bool
	}{
		{c1, c1, true}, {c1, c3, true}, {c3, c1, false}, {c2, c3, true},
		{x1, c3, false}, {c3, x1, false}, {x1, x2, true},
		{x1, m, true}, {x2, m, true}, {c3, m, true}, {c1, m, true},
		{m, c3, false}, {m, x2, false}, {x1, c4, true}, {c2, c4, true}, {c4, m, false},
	}
	names := map[string]string{c1: "c1", c2: "c2", c3: "c3", c4: "c4", x1: "x1", x2: "x2", m: "m"}
	for _, tt := range tests {
		var got bool
		err := r.locked(func(st storer.EncodedObjectStorer) error {
			var err error
			got, err = isAncestor(st, plumbing.NewHash(tt.a), plumbing.NewHash(tt.b))
			return err
		})
		if err != nil || got != tt.want {
			t.Errorf("isAncestor(%s, %s) = %v, %v; want %v", names[tt.a], names[tt.b], got, err, tt.want)
		}
	}
}

// TestMergeBase: on random histories with branches, merges and commit
// dates that lie, mergeBase answers one of `git merge-base --all`'s
// answers (and nothing when git finds none).
func TestMergeBase(t *testing.T) {
	t.Parallel()
	for seed := range int64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			dir, commits := randomHistory(t, rand.New(rand.NewSource(seed)), 60)
			r, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewSource(seed + 100))
			for range 40 {
				a, b := commits[rng.Intn(len(commits))], commits[rng.Intn(len(commits))]
				want, _ := gitOut(dir, "merge-base", "--all", a, b)
				var got plumbing.Hash
				err := r.locked(func(st storer.EncodedObjectStorer) error {
					var err error
					got, err = mergeBase(st, plumbing.NewHash(a), plumbing.NewHash(b))
					return err
				})
				if err != nil {
					t.Fatalf("mergeBase(%.7s, %.7s): %v", a, b, err)
				}
				bases := strings.Fields(want)
				if got.IsZero() != (len(bases) == 0) || (!got.IsZero() && !slices.Contains(bases, got.String())) {
					t.Errorf("mergeBase(%.7s, %.7s) = %.7s; git merge-base --all says %q", a, b, got, bases)
				}
			}
		})
	}
}

// randomHistory commits n empty commits on random branches of a new
// repository, merging one branch into another now and then and giving
// every commit a random date (some years off), and a second root now and
// then; it returns the directory and the commits.
func randomHistory(t *testing.T, rng *rand.Rand, n int) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		date := fmt.Sprintf("%d +0000", 1.7e9+rng.Int63n(3e8))
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com",
			"GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q", "-b", "b0")
	branches := []string{"b0"}
	var commits []string
	for i := range n {
		switch k := rng.Intn(10); {
		case k < 2 && len(commits) > 0:
			name := fmt.Sprintf("b%d", len(branches))
			run("checkout", "-q", "-b", name, commits[rng.Intn(len(commits))])
			branches = append(branches, name)
		case k < 4 && len(branches) > 1:
			run("checkout", "-q", branches[rng.Intn(len(branches))])
			other := branches[rng.Intn(len(branches))]
			run("merge", "-q", "--no-ff", "--allow-unrelated-histories", "-m", fmt.Sprintf("merge %d", i), other)
			commits = append(commits, run("rev-parse", "HEAD"))
			continue
		case k == 4 && i > n/2 && len(branches) < 4:
			name := fmt.Sprintf("b%d", len(branches))
			run("checkout", "-q", "--orphan", name)
			branches = append(branches, name)
		}
		run("commit", "-q", "--allow-empty", "-m", fmt.Sprintf("c%d", i))
		commits = append(commits, run("rev-parse", "HEAD"))
	}
	return dir, commits
}

func gitOut(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}
