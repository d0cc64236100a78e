package daemon

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/gitsync"
)

// propose commits a persona-file change to a new proposals/<agent>/<n>
// branch that starts at main (people's branch, where a person merges
// it); neither main nor live moves.
func (wr *writer) propose(ctx context.Context, ref agentRef, user, message string, key gitsync.WriteKey, build buildFunc) (committed, error) {
	s := ref.src
	agent := ref.ag.agent.Name
	if err := s.writes.lock.LockContext(ctx); err != nil {
		return committed{}, wr.notApplied(s)
	}
	defer s.writes.lock.Unlock()
	prefix := "refs/heads/proposals/" + agent + "/"
	existing, err := s.repo.RefNames(prefix)
	if err != nil {
		return committed{}, err
	}
	if c, ok := wr.proposed(s, existing, key); ok {
		return c, nil
	}
	head, err := s.repo.Resolve(gitsync.MainRef.String())
	if err != nil {
		return committed{}, fmt.Errorf("resolve main: %w", err)
	}
	snap, err := s.repo.SnapshotOf(head)
	if err != nil {
		return committed{}, err
	}
	writes, err := build(snap)
	if err != nil {
		return committed{}, err
	}
	if len(writes) == 0 {
		return committed{}, api.Errorf(api.CodeNoChange, "nothing to propose")
	}
	n := 0
	for _, name := range existing {
		if k, err := strconv.Atoi(strings.TrimPrefix(name, prefix)); err == nil && k > n {
			n = k
		}
	}
	// Take the next free number; a concurrent proposal that took it first
	// makes Commit refuse (Create), and the next number is tried.
	var h plumbing.Hash
	var branch string
	for try := 0; ; try++ {
		branch = prefix + strconv.Itoa(n+1+try)
		var keys []gitsync.WriteKey
		if key.ID != "" {
			keys = []gitsync.WriteKey{key}
		}
		h, err = s.repo.Commit(ctx, gitsync.CommitRequest{Ref: branch, Start: head.String(), Create: true, Writes: writes,
			Author: author(agent, wr.now()), User: user, Message: message + " (proposal)", Keys: keys})
		if !errors.Is(err, gitsync.ErrStale) || try >= 100 {
			break
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return committed{}, wr.notApplied(s) // the writer lock came too late
	}
	if err != nil {
		return committed{}, err
	}
	return committed{commit: h.String(), branch: strings.TrimPrefix(branch, "refs/heads/")}, nil
}

// proposed finds the proposal branch, among branches, whose commit
// carries key: a retry of a proposal is answered with it.
func (wr *writer) proposed(s *source, branches []string, key gitsync.WriteKey) (committed, bool) {
	if key.ID == "" {
		return committed{}, false
	}
	for _, name := range branches {
		tip, err := s.repo.Resolve(name)
		if err != nil {
			continue
		}
		kcs, err := s.repo.RecentWriteKeys(tip, plumbing.ZeroHash, 1)
		if err != nil || len(kcs) == 0 {
			continue
		}
		for _, k := range kcs[0].Keys {
			if k.ID == key.ID {
				return committed{commit: tip.String(), branch: strings.TrimPrefix(name, "refs/heads/"),
					replay: &keyHit{commit: tip.String(), path: k.Path}}, true
			}
		}
	}
	return committed{}, false
}
