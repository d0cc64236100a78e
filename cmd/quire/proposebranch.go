package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/llm"
	"github.com/quirehq/quire/llm/draft"
)

// checkout is a local git checkout (summon --dir, consolidate --dir):
// its repository and the commit its HEAD is at.
type checkout struct {
	root string
	repo *gitsync.Repository
	head plumbing.Hash
}

func openCheckout(ctx context.Context, dir string) (*checkout, error) {
	root, err := gitsync.WorkTreeRoot(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("--dir %s: a proposal is a git branch, so this must be a git checkout: %w", dir, err)
	}
	repo, err := gitsync.Open(root)
	if err != nil {
		return nil, err
	}
	head, err := repo.Resolve("HEAD")
	if err != nil {
		return nil, fmt.Errorf("--dir %s: no commit to start a proposal branch from (commit first): %w", dir, err)
	}
	return &checkout{root: root, repo: repo, head: head}, nil
}

// tree is HEAD's tree.
func (c *checkout) tree() (fs.FS, error) { return c.repo.SnapshotOf(c.head) }

// propose commits d's files to a new branch proposals/<agent>/<n> that
// starts at HEAD; the work tree, the index and the checked-out branch
// are not touched.
func (c *checkout) propose(ctx context.Context, agent, message string, d *draft.Draft) (api.ProposalResponse, error) {
	prefix := "refs/heads/proposals/" + agent + "/"
	existing, err := c.repo.RefNames(prefix)
	if err != nil {
		return api.ProposalResponse{}, err
	}
	n := 0
	for _, name := range existing {
		if k, err := strconv.Atoi(strings.TrimPrefix(name, prefix)); err == nil && k > n {
			n = k
		}
	}
	var writes []gitsync.FileWrite
	for _, p := range d.Paths() {
		writes = append(writes, gitsync.FileWrite{Path: p, Content: d.Files[p]})
	}
	branch := prefix + strconv.Itoa(n+1)
	h, err := c.repo.Commit(ctx, gitsync.CommitRequest{Ref: branch, Start: c.head.String(), Create: true, Writes: writes,
		Author: object.Signature{Name: agent, Email: agent + "@quire.invalid", When: time.Now()}, Message: message + " (proposal)"})
	if errors.Is(err, gitsync.ErrStale) {
		return api.ProposalResponse{}, fmt.Errorf("branch %s appeared meanwhile; run again", strings.TrimPrefix(branch, "refs/heads/"))
	}
	if err != nil {
		return api.ProposalResponse{}, err
	}
	return api.ProposalResponse{Branch: strings.TrimPrefix(branch, "refs/heads/"), Commit: h.String(), Files: d.Paths(), Warnings: d.Warnings}, nil
}

// reportProposal ends summon and consolidate: a model's answer the checks
// refused exits with its problems listed, a proposal is printed (as JSON
// with asJSON).
func reportProposal(e *env, res api.ProposalResponse, err error, asJSON, local bool) error {
	if printInvalid(e.stderr, err) {
		return exitError{code: exitFindings}
	}
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(e.stdout, res)
	}
	printProposal(e.stdout, res, local)
	return nil
}

// localModel is the model of the flags for a command run on a checkout
// (--dir), which has no daemon to ask: without --llm-url it is a usage
// error.
func localModel(e *env, o *llmOptions) (*llm.Client, error) {
	m, err := o.open(e.getenv, slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, usagef("--dir needs a model: give --llm-url and --llm-model")
	}
	return m, nil
}

// printProposal tells what was proposed and how a person decides.
func printProposal(w io.Writer, res api.ProposalResponse, local bool) {
	fmt.Fprintf(w, "proposed on branch %s (commit %.12s), written by %s:\n", res.Branch, res.Commit, res.Model)
	for _, f := range res.Files {
		fmt.Fprintf(w, "  %s\n", f)
	}
	for _, p := range res.Warnings {
		fmt.Fprintf(w, "warning: %s\n", p)
	}
	if local {
		fmt.Fprintf(w, "review it with `git diff HEAD...%s`; merge it with `git merge %s`, or drop it with `git branch -D %s`\n", res.Branch, res.Branch, res.Branch)
		return
	}
	fmt.Fprintf(w, "nothing is deployed until a person merges it into main (git fetch, git merge %s, git push; or the console)\n", res.Branch)
}

// printInvalid lists the problems of a model's answer the checks refused.
func printInvalid(w io.Writer, err error) bool {
	var inv *draft.InvalidError
	if !errors.As(err, &inv) {
		return false
	}
	fmt.Fprintf(w, "%s does not pass the checks; nothing was proposed (try again, or a stronger model):\n", inv.What)
	for _, p := range inv.Problems {
		fmt.Fprintf(w, "  %s\n", p)
	}
	return true
}
