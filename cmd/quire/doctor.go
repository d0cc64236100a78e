package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/internal/xdg"
)

type doctorOptions struct {
	repos, cacheDir string
}

func doctorCommand() *command {
	return &command{
		name:    "doctor",
		summary: "check the daemon's git repositories for damage and say how to repair it; exit 1 when damaged",
		help: `
Checks the git repositories quire serve keeps: the hosted ones (--repos) and
the mirrors of an upstream in its cache directory (--cache-dir; by default
the user cache directory, when --repos is not given). For each it reads
every ref (loose and in packed-refs), every pack whole against its checksum
and its index, and every object of every branch and tag through all their
history, and runs git fsck when git is on the PATH. It prints OK, or each
damaged file, each object that cannot be read (with its branch and path:
an agent whose directory cannot be read is not served), and how to repair
it. It changes nothing (but removes temporary files a crash left, as quire
serve does), so it can run while quire serve does.

The exit status is 1 when a repository is damaged, 0 otherwise.

Examples:
  quire doctor --repos /srv/quire/repos
  quire doctor --cache-dir ~/.cache/quire`,
		flags: func(fs *flag.FlagSet) any {
			o := &doctorOptions{}
			fs.StringVar(&o.repos, "repos", "", "`directory` of the hosted bare repositories (quire serve --repos)")
			fs.StringVar(&o.cacheDir, "cache-dir", "", "the daemon's cache `directory`, whose upstream mirrors are checked (quire serve --cache-dir)")
			return o
		},
		run: runDoctor,
	}
}

// doctorRepo is one repository doctor checks.
type doctorRepo struct {
	path   string
	mirror bool // an upstream's mirror in the cache directory
}

func runDoctor(ctx context.Context, e *env, opts any, args []string) error {
	o := opts.(*doctorOptions)
	if len(args) > 0 {
		return usagef("unexpected argument %q: name the directories with --repos or --cache-dir", args[0])
	}
	var repos []doctorRepo
	if o.repos != "" {
		found, err := bareRepos(o.repos)
		if err != nil {
			return fmt.Errorf("--repos %s: %w", o.repos, err)
		}
		for _, p := range found {
			repos = append(repos, doctorRepo{path: p})
		}
	}
	cache := o.cacheDir
	if cache == "" && o.repos == "" {
		cache = xdg.CacheDir(e.getenv)
	}
	if cache != "" {
		found, err := bareRepos(filepath.Join(cache, "upstream"))
		if err != nil && (o.cacheDir != "" || !errors.Is(err, os.ErrNotExist)) {
			return fmt.Errorf("--cache-dir %s: %w", cache, err)
		}
		for _, p := range found {
			repos = append(repos, doctorRepo{path: p, mirror: true})
		}
	}
	if len(repos) == 0 {
		return usagef("no repository to check: give --repos DIR (hosted repositories) or --cache-dir DIR (upstream mirrors)")
	}
	damaged := 0
	for _, r := range repos {
		if !doctorCheck(ctx, e.stdout, r) {
			damaged++
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	if damaged > 0 {
		fmt.Fprintf(e.stdout, "\n%d of %d repositories are damaged.\n", damaged, len(repos))
		return exitError{exitFindings}
	}
	return nil
}

// bareRepos lists the repositories (NAME.git directories) in dir.
func bareRepos(dir string) ([]string, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, de := range des {
		if name, ok := strings.CutSuffix(de.Name(), ".git"); ok && de.IsDir() && gitsync.ValidRepoName(name) {
			out = append(out, filepath.Join(dir, de.Name()))
		}
	}
	return out, nil
}

// doctorCheck checks one repository and prints what it found; it
// reports whether the repository is whole.
func doctorCheck(ctx context.Context, w io.Writer, dr doctorRepo) bool {
	label := dr.path
	if dr.mirror {
		label += " (a mirror of the upstream)"
	}
	var faults []gitsync.Fault
	var other []string // what is wrong that is no Fault
	r, err := gitsync.Open(dr.path)
	if err != nil {
		other = append(other, err.Error())
	} else {
		err := r.Verify(ctx, gitsync.VerifyOptions{Full: true})
		var d *gitsync.DamageError
		switch {
		case errors.As(err, &d):
			faults = d.Faults
		case err != nil:
			other = append(other, err.Error())
		}
	}
	fsck, ran := gitFsck(ctx, dr.path)
	if len(faults) == 0 && len(other) == 0 && len(fsck) == 0 {
		fmt.Fprintf(w, "%s: OK\n", label)
		if !ran {
			fmt.Fprintf(w, "  (git is not on the PATH: git fsck did not run)\n")
		}
		return true
	}
	fmt.Fprintf(w, "%s: DAMAGED\n", label)
	for _, f := range faults {
		fmt.Fprintf(w, "  %s\n", f)
	}
	for _, s := range other {
		fmt.Fprintf(w, "  %s\n", s)
	}
	for _, l := range fsck {
		fmt.Fprintf(w, "  git fsck: %s\n", l)
	}
	var dirs []string
	for _, f := range faults {
		if f.Type == plumbing.TreeObject && f.Path != "" && f.Path != "." && !slices.Contains(dirs, f.Path+"/") {
			dirs = append(dirs, f.Path+"/")
		}
	}
	if len(dirs) > 0 {
		fmt.Fprintf(w, "  not served: the agents in %s (their directories cannot be read)\n", strings.Join(dirs, ", "))
	}
	for _, l := range repairSteps(dr, faults) {
		fmt.Fprintf(w, "  %s\n", l)
	}
	return false
}

// maxFsckLines bounds the lines of git fsck's output doctor prints.
const maxFsckLines = 10

// gitFsck runs git fsck on the repository at dir and returns its
// complaints (nil when it found none) and whether git ran.
func gitFsck(ctx context.Context, dir string) ([]string, bool) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, false
	}
	cmd := exec.CommandContext(ctx, "git", "fsck", "--no-dangling", "--no-progress")
	cmd.Env = append(os.Environ(), "GIT_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err == nil {
		return nil, true
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "notice: ") {
			continue
		}
		if len(lines) == maxFsckLines {
			lines = append(lines, "…")
			break
		}
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		lines = []string{err.Error()}
	}
	return lines, true
}

// repairSteps says how to repair a damaged repository: a mirror is
// fetched again by quire serve; broken lines of packed-refs and broken
// ref files are removed; anything else is restored from a clone.
func repairSteps(dr doctorRepo, faults []gitsync.Fault) []string {
	q := shellQuote
	if dr.mirror {
		return []string{
			"repair: quire serve fetches it again from the upstream after its next fetch (the damaged copy is moved aside);",
			"  or stop quire serve and delete it, and the next start fetches it again:",
			"    rm -rf " + q(dr.path),
		}
	}
	var lines []string
	var files []string
	onlyRefs := len(faults) > 0
	for _, f := range faults {
		switch {
		case f.Line > 0:
			lines = append(lines, strconv.Itoa(f.Line)+"d")
		case f.Object.IsZero() && strings.HasPrefix(f.File, "refs/"):
			files = append(files, f.File)
		default:
			onlyRefs = false
		}
	}
	name := filepath.Base(dr.path)
	damaged := dr.path + ".damaged"
	if onlyRefs {
		out := []string{"repair: with quire serve stopped,"}
		if len(lines) > 0 {
			out = append(out, "  delete the broken lines of packed-refs (git reads no ref of the file while they are there):",
				"    sed -i '"+strings.Join(lines, ";")+"' "+q(filepath.Join(dr.path, "packed-refs")))
		}
		if len(files) > 0 {
			out = append(out, "  remove the broken ref files:")
			for _, f := range files {
				out = append(out, "    rm "+q(filepath.Join(dr.path, filepath.FromSlash(f))))
			}
		}
		return append(out, "  then push the branches they named again from a clone, and run quire doctor again.")
	}
	return []string{
		"repair: restore it from a clone that fetched main and live (a developer's, or another host's). With quire serve stopped:",
		"    mv " + q(dr.path) + " " + q(damaged),
		"    git init --bare " + q(dr.path),
		"    git -C " + q(dr.path) + " symbolic-ref HEAD refs/heads/main",
		"    git -C " + q(dr.path) + " fetch CLONE 'refs/remotes/origin/*:refs/heads/*' '^refs/remotes/origin/HEAD'",
		"  (CLONE: the clone's directory, whose origin is " + name + "), then start quire serve and run quire doctor again.",
		"  Agents' writes the clone never fetched are only in " + q(damaged) + " (git -C " + q(damaged) + " log live).",
	}
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
