package gitsync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// ErrNotWorkTree is the error of a directory that is not inside a git work
// tree.
var ErrNotWorkTree = errors.New("not inside a git work tree")

// WorkTreeRoot is the top directory of the git work tree dir is in, asked
// of the git CLI (so GIT_DIR, GIT_WORK_TREE and the rest count as they
// do for git). A directory outside any work tree (or inside a .git
// directory) is ErrNotWorkTree; git missing from PATH is exec.ErrNotFound.
func WorkTreeRoot(ctx context.Context, dir string) (string, error) {
	out, err := workTreeGit(ctx, dir, nil, "rev-parse", "--show-toplevel")
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return "", fmt.Errorf("%s: %w", dir, ErrNotWorkTree)
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(out), "\n"), nil
}

// workTreeGit runs git in dir with stdin as its input and returns its
// standard output; the error names the git command and what git said.
func workTreeGit(ctx context.Context, dir string, stdin io.Reader, args ...string) ([]byte, error) {
	return workTreeGitEnv(ctx, dir, stdin, nil, args...)
}

// workTreeGitEnv is workTreeGit with variables added to the environment.
func workTreeGitEnv(ctx context.Context, dir string, stdin io.Reader, extra []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(workTreeEnv(ctx), extra...)
	cmd.Stdin = stdin
	cmd.WaitDelay = 5 * time.Second
	var out, stderr bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &limitedBuffer{b: &stderr, n: 8 << 10}
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndex(msg, "fatal: "); i >= 0 {
			msg = msg[i+len("fatal: "):]
		}
		if msg == "" {
			return out.Bytes(), fmt.Errorf("git %s: %w", args[0], err)
		}
		return out.Bytes(), fmt.Errorf("git %s: %s: %w", args[0], oneLine(msg), err)
	}
	return out.Bytes(), nil
}

// workTreeEnv is the process's environment for a git run in another
// directory, set so that git there finds the repository, work tree and
// index it finds here: a relative GIT_DIR or GIT_WORK_TREE is made
// absolute, and with GIT_DIR but no GIT_WORK_TREE (what git gives a hook
// in a linked work tree) the top of the work tree is asked of git here,
// for git elsewhere would take its own directory for the top. A relative
// GIT_INDEX_FILE (a pre-commit hook gets .git/index) is relative to the
// top of the work tree, so it stays as it is.
func workTreeEnv(ctx context.Context) []string {
	env := os.Environ()
	gitDir, hasDir := os.LookupEnv("GIT_DIR")
	_, hasTree := os.LookupEnv("GIT_WORK_TREE")
	if !hasDir && !hasTree {
		return env
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if (k == "GIT_DIR" || k == "GIT_WORK_TREE") && v != "" && !filepath.IsAbs(v) {
			if abs, err := filepath.Abs(v); err == nil {
				kv = k + "=" + abs
			}
		}
		out = append(out, kv)
	}
	if hasDir && gitDir != "" && !hasTree {
		top, err := exec.CommandContext(ctx, "git", "rev-parse", "--show-toplevel").Output()
		if err == nil {
			out = append(out, "GIT_WORK_TREE="+strings.TrimSuffix(string(top), "\n"))
		}
	}
	return out
}

// Identity is who a commit is by: its author and committer.
type Identity struct {
	Name, Email string
}

func (id Identity) String() string { return id.Name + " <" + id.Email + ">" }

// InitWorkTree makes dir a new git work tree with a first commit: git init
// (branch main, whatever git's default), then paths (relative to dir) added
// and committed with message. The commit is by the identity git is
// configured with (user.name and user.email, or the GIT_AUTHOR_* and
// GIT_COMMITTER_* variables); when git has none, or only one that git
// would guess from the user and host names, it is by fallback, and
// fellBack says so. dir's .git/hooks exists afterwards, whatever git's
// template directory holds, so a hook can be written there at once.
func InitWorkTree(ctx context.Context, dir string, paths []string, message string, fallback Identity) (fellBack bool, err error) {
	if _, err := workTreeGit(ctx, dir, nil, "init", "--quiet", "--initial-branch=main"); err != nil {
		return false, err
	}
	if err := os.MkdirAll(filepath.Join(dir, ".git", "hooks"), 0o755); err != nil {
		return false, err
	}
	if _, err := workTreeGit(ctx, dir, nil, append([]string{"add", "--"}, paths...)...); err != nil {
		return false, err
	}
	var env []string
	if !hasIdentity(ctx, dir) {
		fellBack = true
		env = []string{"GIT_AUTHOR_NAME=" + fallback.Name, "GIT_AUTHOR_EMAIL=" + fallback.Email,
			"GIT_COMMITTER_NAME=" + fallback.Name, "GIT_COMMITTER_EMAIL=" + fallback.Email}
	}
	_, err = workTreeGitEnv(ctx, dir, nil, env, "commit", "--quiet", "--message", message)
	return fellBack, err
}

// hasIdentity reports whether git in dir has an author and a committer
// that were configured, not guessed from the user and host names.
func hasIdentity(ctx context.Context, dir string) bool {
	for _, v := range []string{"GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"} {
		if _, err := workTreeGit(ctx, dir, nil, "-c", "user.useConfigOnly=true", "var", v); err != nil {
			return false
		}
	}
	return true
}
