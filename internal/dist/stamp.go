package main

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// stamp is what a release is built from and says it is: `quire version`
// prints it, the archives are named after Version, and Time is every
// archive entry's modification time (a commit's time, so that two builds
// of one commit give the same bytes).
type stamp struct {
	Version string
	Commit  string
	Time    time.Time
}

// stampOptions override what git says.
type stampOptions struct {
	Version string // "" : the commit's tag, or a Go pseudo-version
	// SourceDateEpoch, when not "", is the Unix time used instead of the
	// commit's (the SOURCE_DATE_EPOCH convention).
	SourceDateEpoch string
}

// gitStamp reads the stamp of the checkout in dir: HEAD's commit, its
// committer time, and its version (an exact v* tag, else a pseudo-version
// such as v0.0.0-20261126051220-1293db5abcde). A tree with changes git
// sees gets "+dirty", as the go command marks such builds.
func gitStamp(ctx context.Context, dir string, o stampOptions) (stamp, error) {
	var s stamp
	var err error
	if s.Commit, err = git(ctx, dir, "rev-parse", "HEAD"); err != nil {
		return s, err
	}
	epoch := o.SourceDateEpoch
	if epoch == "" {
		if epoch, err = git(ctx, dir, "show", "-s", "--format=%ct", "HEAD"); err != nil {
			return s, err
		}
	}
	sec, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		return s, fmt.Errorf("commit time %q: not a Unix time (check SOURCE_DATE_EPOCH): %w", epoch, err)
	}
	s.Time = time.Unix(sec, 0).UTC()
	s.Version = o.Version
	if s.Version == "" {
		tag, _ := git(ctx, dir, "describe", "--tags", "--exact-match", "--match", "v[0-9]*", "HEAD")
		s.Version = versionFor(tag, s.Commit, s.Time)
		status, err := git(ctx, dir, "status", "--porcelain")
		if err != nil {
			return s, err
		}
		if status != "" {
			s.Version += "+dirty"
		}
	}
	return s, nil
}

// versionFor is the tag when HEAD has one, else Go's pseudo-version for a
// commit with no tag before it.
func versionFor(tag, commit string, t time.Time) string {
	if tag != "" {
		return tag
	}
	short := commit
	if len(short) > 12 {
		short = short[:12]
	}
	return fmt.Sprintf("v0.0.0-%s-%s", t.UTC().Format("20060102150405"), short)
}

// ldflags are the linker flags of a release build: no symbol table or
// DWARF, no build id, and the stamp.
func (s stamp) ldflags() string {
	return strings.Join([]string{
		"-s", "-w", "-buildid=",
		"-X", "main.version=" + s.Version,
		"-X", "main.commit=" + s.Commit,
		"-X", "main.date=" + s.Time.Format(time.RFC3339),
	}, " ")
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
			err = fmt.Errorf("%w: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("git %s in %s: %w (a release is built from a git checkout; set -version and SOURCE_DATE_EPOCH otherwise)", strings.Join(args, " "), dir, err)
	}
	return strings.TrimSpace(string(out)), nil
}
