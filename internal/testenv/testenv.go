// Package testenv is what tests of several packages share to drive the
// real git CLI: git run with a fixed identity and no system or user
// configuration, work trees made from a map of files, and trees read
// back into one. Only tests import it; it imports no package of Quire's,
// so any package's tests may use it without an import cycle.
package testenv

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// GitEnv is the environment git runs in: the process's, with a fixed
// author and committer, no system or global configuration, no prompts
// and main as the default branch.
func GitEnv() []string {
	return append(os.Environ(),
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0",
		"GIT_ASKPASS=", "SSH_ASKPASS=",
		"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=init.defaultBranch", "GIT_CONFIG_VALUE_0=main")
}

// Git runs git in dir and returns its trimmed output; t fails when git
// does.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := GitTry(dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// GitTry runs git in dir and returns its trimmed combined output and
// error.
func GitTry(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = GitEnv()
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// WriteFiles writes files (slash-separated path → content) under dir.
func WriteFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// NewWorkTree makes a work tree in a temporary directory holding files,
// committed on main with message, and returns its path.
func NewWorkTree(t testing.TB, files map[string]string, message string) string {
	t.Helper()
	dir := t.TempDir()
	Git(t, dir, "init", "-q", "-b", "main")
	WriteFiles(t, dir, files)
	Git(t, dir, "add", "-A")
	Git(t, dir, "commit", "-q", "-m", message)
	return dir
}

// ReadTree returns the files under src (slash-separated path relative
// to src → content), as WriteFiles takes them.
func ReadTree(t testing.TB, src string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
