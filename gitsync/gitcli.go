package gitsync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// MinGitVersion is the oldest git CLI this package runs (see doc.go for
// what it runs git for). Each feature it relies on, and the release that
// brought it:
//
//   - core.fsync and core.fsyncMethod (2.36): fetched packs and refs are
//     synced before a fetch returns. Older git ignores both settings
//     without a word, and a crash could lose what was acknowledged.
//   - git repack --geometric (2.32): Host.Maintain's repacks.
//   - git fetch --no-write-fetch-head (2.29): a Follower's fetch.
//
// upload-pack --stateless-rpc --advertise-refs and index-pack --stdin
// --fix-thin --strict --max-input-size are older than all of these.
const MinGitVersion = "2.36"

// GitVersionError is a git CLI that is missing or too old.
type GitVersionError struct {
	Path  string // the git found on PATH ("" when none was)
	Found string // its version as it printed it ("" when none was found)
	Why   string // when the version could not be read
}

func (e *GitVersionError) Error() string {
	need := "git " + MinGitVersion + " or later is needed"
	switch {
	case e.Path == "":
		return need + " on PATH, and none was found (Debian: apt-get install git)"
	case e.Why != "":
		return fmt.Sprintf("%s, and the version of the git on PATH (%s) is unknown: %s", need, e.Path, e.Why)
	}
	return fmt.Sprintf("%s, and the git on PATH (%s) is %s", need, e.Path, e.Found)
}

var gitVersionRE = regexp.MustCompile(`^git version (\d+)\.(\d+)(\S*)`)

// CheckGit finds git on PATH and checks that it is MinGitVersion or
// later, returning its version; a *GitVersionError when it is not.
func CheckGit(ctx context.Context) (string, error) {
	path, err := exec.LookPath("git")
	if err != nil {
		return "", &GitVersionError{}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "version")
	cmd.Env = gitEnv()
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	if err != nil {
		why := err.Error()
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			why += ": " + oneLine(strings.TrimSpace(string(ee.Stderr)))
		}
		return "", &GitVersionError{Path: path, Why: "git version failed: " + why}
	}
	line := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	m := gitVersionRE.FindStringSubmatch(line)
	if m == nil {
		return "", &GitVersionError{Path: path, Why: fmt.Sprintf("git version printed %q", line)}
	}
	version := strings.TrimPrefix(line, "git version ")
	if !atLeast(m[1], m[2], MinGitVersion) {
		return version, &GitVersionError{Path: path, Found: version}
	}
	return version, nil
}

// atLeast reports whether major.minor is min ("X.Y") or later.
func atLeast(major, minor, min string) bool {
	wantMajor, wantMinor, _ := strings.Cut(min, ".")
	a, _ := strconv.Atoi(major)
	b, _ := strconv.Atoi(minor)
	x, _ := strconv.Atoi(wantMajor)
	y, _ := strconv.Atoi(wantMinor)
	return a > x || a == x && b >= y
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// gitEnv is the environment of a git child process: this process's
// without GIT_* variables (they could point git at another repository),
// plus extra.
func gitEnv(extra ...string) []string {
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "GIT_") {
			env = append(env, e)
		}
	}
	return append(env, extra...)
}

// limitedBuffer keeps the first n bytes written.
type limitedBuffer struct {
	b *bytes.Buffer
	n int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
