package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/pgstore"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestIndexCommand(t *testing.T) {
	url := os.Getenv("QUIRE_TEST_DATABASE_URL")
	if url == "" {
		t.Skip("QUIRE_TEST_DATABASE_URL is not set: `quire index` is NOT tested (run `make test`)")
	}
	ctx := context.Background()
	var b [6]byte
	rand.Read(b[:])
	schema := "quire_test_cli_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, url)
		if err == nil {
			conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			conn.Close(ctx)
		}
	})
	dir := t.TempDir()
	files := map[string]string{
		"agents/a/agent.yaml":              "name: a\n",
		"agents/a/MEMORY.md":               "Backups run nightly.\n",
		"agents/a/users/alice/memory/x.md": "Alice likes tea.\n",
		"agents/b/agent.yaml":              "name: b\n",
		"agents/b/memory/2026-01-01.md":    "Agent b log.\n",
	}
	for p, text := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "init", "-q")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-qm", "init")
	head := git(t, dir, "rev-parse", "HEAD")

	index := func() (string, string) {
		var stdout, stderr bytes.Buffer
		e := &env{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
		code := run(ctx, []string{"index", "--dir", dir, "--database", url, "--schema", schema}, e)
		if code != 0 {
			t.Fatalf("quire index exited %d:\n%s%s", code, stdout.String(), stderr.String())
		}
		return stdout.String(), stderr.String()
	}
	out, progress := index()
	if !strings.Contains(out, "indexed 2 agent(s): 3 documents, 3 changed") || !strings.Contains(progress, "[####################] 2/2 b") {
		t.Errorf("first run:\n%s%s", out, progress)
	}
	out, _ = index()
	if !strings.Contains(out, "0 changed, 3 unchanged") {
		t.Errorf("second run of the same commit:\n%s", out)
	}
	s, err := pgstore.Open(ctx, pgstore.Options{URL: url, Schema: schema, Embedder: memory.Builtin{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if c, _ := s.IndexedCommit(ctx, "a"); c != head {
		t.Errorf("indexed commit of a = %q, want %s", c, head)
	}
	hits, err := s.Search(ctx, "a", memory.Query{Text: "tea", User: "alice"})
	if err != nil || len(hits) == 0 || hits[0].User != "alice" {
		t.Errorf("search after index: %+v, %v", hits, err)
	}
}

// Without --database, `quire index` builds the embedded index that
// `quire search --local` reads, and names the memory files it skips
// because their changes are not committed (it used to skip them
// silently, and to refuse to run without a database).
func TestIndexEmbedded(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cacheHome := t.TempDir()
	for p, text := range map[string]string{
		"agent.yaml": "name: a\n",
		"MEMORY.md":  "Backups run nightly.\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "init", "-q")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-qm", "init")
	os.MkdirAll(filepath.Join(dir, "memory"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, "memory", "new.md"), []byte("Uncommitted tea.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "MEMORY.md"), []byte("Backups run weekly.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "XDG_CACHE_HOME" {
			return cacheHome
		}
		return ""
	}
	cli := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := run(ctx, args, &env{stdout: &stdout, stderr: &stderr, getenv: getenv})
		return code, stdout.String(), stderr.String()
	}
	code, out, errOut := cli("index", "--dir", dir)
	if code != 0 || !strings.Contains(out, "indexed 1 agent(s) into the embedded index: 1 documents") {
		t.Fatalf("quire index exited %d:\n%s%s", code, out, errOut)
	}
	for _, p := range []string{"MEMORY.md", "memory/new.md"} {
		if !strings.Contains(errOut, filepath.ToSlash(filepath.Join(dir, p))+": warning: not committed, so not indexed") {
			t.Errorf("%s is not named as skipped:\n%s", p, errOut)
		}
	}
	snaps, _ := filepath.Glob(filepath.Join(cacheHome, "quire", "index", "*"))
	if len(snaps) != 1 {
		t.Fatalf("embedded index snapshots: %v", snaps)
	}
	// The working tree, when asked for: nothing is skipped.
	code, out, errOut = cli("index", "--dir", dir, "--rev", "")
	if code != 0 || !strings.Contains(out, "2 documents") || strings.Contains(errOut, "not committed") {
		t.Fatalf("--rev '': %d\n%s%s", code, out, errOut)
	}
}
