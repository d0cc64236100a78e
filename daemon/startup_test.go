package daemon_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/internal/testenv"
)

// fakeGit puts a `git` that prints version (or, with version "", no git
// at all) alone on PATH for the rest of the test.
func fakeGit(t *testing.T, script string) string {
	t.Helper()
	dir := t.TempDir()
	if script != "" {
		if err := os.WriteFile(filepath.Join(dir, "git"), []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
	return filepath.Join(dir, "git")
}

// TestStartNeedsGit: a daemon whose sources run the git CLI (hosted
// repositories, an upstream) does not start without git 2.36 or later on
// PATH, and says what it found and what it needs; a working tree alone
// needs no git.
func TestStartNeedsGit(t *testing.T) {
	need := "git " + gitsync.MinGitVersion + " or later is needed"
	for _, tc := range []struct {
		name    string
		script  string // the fake git's body; "" is no git on PATH
		repos   bool
		want    string // "" starts
		withDir bool
	}{
		{name: "repos, no git", repos: true,
			want: "--repos REPOS runs git (fetches, pushed packs, repacks): " + need + " on PATH, and none was found (Debian: apt-get install git)"},
		{name: "repos, old git", script: "echo 'git version 2.30.2'", repos: true,
			want: "--repos REPOS runs git (fetches, pushed packs, repacks): " + need + ", and the git on PATH (GIT) is 2.30.2"},
		{name: "repos, git that fails", script: "echo broken >&2; exit 3", repos: true,
			want: "--repos REPOS runs git (fetches, pushed packs, repacks): " + need + ", and the version of the git on PATH (GIT) is unknown: git version failed: exit status 3: broken"},
		{name: "upstream, old git", script: "echo 'git version 2.35.9'",
			want: "--upstream file:///nowhere.git runs git (fetch, push): " + need + ", and the git on PATH (GIT) is 2.35.9"},
		{name: "dir alone, no git", withDir: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := shortTempDir(t)
			opts := daemon.Options{Socket: filepath.Join(tmp, "q.sock"), CacheDir: filepath.Join(tmp, "cache"), GitListen: "127.0.0.1:0"}
			repos := filepath.Join(tmp, "repos")
			switch {
			case tc.repos:
				opts.ReposDir = repos
			case tc.withDir:
				opts.Dir = tmp
				testenv.WriteFiles(t, tmp, map[string]string{"agent.yaml": "name: bot\n"})
			default:
				opts.Upstream = "file:///nowhere.git"
			}
			gitPath := fakeGit(t, tc.script)
			_, err := daemon.New(context.Background(), opts)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("daemon.New: %v", err)
				}
				return
			}
			want := strings.NewReplacer("REPOS", repos, "GIT", gitPath).Replace(tc.want)
			if err == nil || err.Error() != want {
				t.Fatalf("daemon.New:\n%v\nwant\n%s", err, want)
			}
			if _, err := os.Stat(repos); !os.IsNotExist(err) {
				t.Errorf("a refused start made %s: %v", repos, err)
			}
		})
	}
}

// TestReposHeldByAnotherDaemon: a second daemon on a --repos directory
// that one serves does not start, and names the directory and the
// holder's pid; once the first stops, the directory is free, although
// its lock file (with the old pid) is still there.
func TestReposHeldByAnotherDaemon(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, daemon.Options{})
	second := func() error {
		tmp := shortTempDir(t)
		d, err := daemon.New(context.Background(), daemon.Options{ReposDir: td.repos, GitListen: "127.0.0.1:0",
			Socket: filepath.Join(tmp, "q.sock"), CacheDir: filepath.Join(tmp, "cache")})
		if err == nil {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			d.Run(ctx) // releases the directory
		}
		return err
	}
	err := second()
	lockFile := filepath.Join(td.repos, ".quire-serve.lock")
	want := fmt.Sprintf("--repos %s is in use by another quire serve (pid %d): two daemons on one directory would serve stale data; stop it, or give this one another --repos (lock file %s)",
		td.repos, os.Getpid(), lockFile)
	if err == nil || err.Error() != want {
		t.Fatalf("second daemon on one --repos:\n%v\nwant\n%s", err, want)
	}
	td.stop()
	if b, err := os.ReadFile(lockFile); err != nil || strings.TrimSpace(string(b)) != fmt.Sprint(os.Getpid()) {
		t.Fatalf("lock file after the stop: %q %v, want the old pid left in it", b, err)
	}
	// A crash leaves the file as a stop does: it does not block.
	if err := second(); err != nil {
		t.Fatalf("start after the holder stopped: %v", err)
	}
	if err := os.WriteFile(lockFile, []byte("999999\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := second(); err != nil {
		t.Fatalf("start over a stale lock file: %v", err)
	}
}
