package gitsync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
)

// Follower keeps a repository up to date with an upstream remote: it
// fetches on an interval and on demand (Trigger), always the full history
// (a shallow fetch breaks later go-git fetches), and reports the refs that
// moved as SourceUpstream events.
type Follower struct {
	// Repository receives the fetched objects and refs.
	Repository *Repository
	// URL is the upstream remote.
	URL string
	// RefSpecs say what to fetch where; default
	// "+refs/heads/*:refs/remotes/upstream/*".
	RefSpecs []string
	// Auth, when set, authenticates to the upstream.
	Auth transport.AuthMethod
	// Interval between fetches; default 5 minutes.
	Interval time.Duration
	// OnEvent receives one event per fetch that moved refs.
	OnEvent func(Event)
	// Logger receives fetch failures; nil discards.
	Logger *slog.Logger

	trigger chan struct{}
}

// NewFollower follows url into r, reporting moves to onEvent.
func NewFollower(r *Repository, url string, onEvent func(Event)) *Follower {
	return &Follower{Repository: r, URL: url, OnEvent: onEvent, trigger: make(chan struct{}, 1)}
}

// Trigger asks a running follower to fetch now. It never blocks; several
// triggers before the fetch starts make one fetch.
func (f *Follower) Trigger() {
	select {
	case f.trigger <- struct{}{}:
	default:
	}
}

// Run fetches at once, then on every interval and trigger, until ctx is
// done. Fetch failures are logged and retried at the next tick.
func (f *Follower) Run(ctx context.Context) error {
	interval := f.Interval
	if interval <= 0 {
		interval = 5 * time.Minute
	}
	log := f.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := f.Fetch(ctx); err != nil && ctx.Err() == nil {
			log.Warn("fetch upstream", "url", f.URL, "repo", f.Repository.Path(), "err", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		case <-f.trigger:
		}
	}
}

// Fetch fetches from the upstream once and returns the refs that moved
// (also sent to OnEvent when any did).
func (f *Follower) Fetch(ctx context.Context) ([]RefUpdate, error) {
	specs := f.RefSpecs
	if len(specs) == 0 {
		specs = []string{"+refs/heads/*:refs/remotes/upstream/*"}
	}
	var refSpecs []config.RefSpec
	for _, s := range specs {
		rs := config.RefSpec(s)
		if err := rs.Validate(); err != nil {
			return nil, fmt.Errorf("refspec %q: %w", s, err)
		}
		refSpecs = append(refSpecs, rs)
	}
	r := f.Repository
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	var updates []RefUpdate
	err := r.locked(func(storer.EncodedObjectStorer) error {
		before, err := refsMatching(r, refSpecs)
		if err != nil {
			return err
		}
		remote := gogit.NewRemote(r.repo.Storer, &config.RemoteConfig{Name: "upstream", URLs: []string{f.URL}})
		err = remote.FetchContext(ctx, &gogit.FetchOptions{
			RefSpecs: refSpecs,
			Auth:     f.Auth,
			Depth:    0, // never shallow
			Tags:     gogit.NoTags,
			Force:    true,
		})
		if err != nil && !errors.Is(err, gogit.NoErrAlreadyUpToDate) && !errors.Is(err, transport.ErrEmptyRemoteRepository) {
			return err
		}
		after, err := refsMatching(r, refSpecs)
		if err != nil {
			return err
		}
		for name, h := range after {
			if before[name] != h {
				updates = append(updates, RefUpdate{Name: name, Old: before[name], New: h})
			}
		}
		for name, h := range before {
			if _, ok := after[name]; !ok {
				updates = append(updates, RefUpdate{Name: name, Old: h})
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("fetch %s into %s: %w", f.URL, r.path, err)
	}
	if r.PacksWritten() >= PacksPerRepack {
		// Each fetch is one pack; roll them up (no locks held).
		if err := r.RepackContext(ctx); err != nil && f.Logger != nil {
			f.Logger.Warn("repack", "repo", r.path, "err", err)
		}
	}
	slices.SortFunc(updates, func(a, b RefUpdate) int { return strings.Compare(string(a.Name), string(b.Name)) })
	if len(updates) > 0 && f.OnEvent != nil {
		f.OnEvent(Event{Source: SourceUpstream, Name: r.path, Repository: r, Refs: updates})
	}
	return updates, nil
}

// refsMatching reads the refs that are destinations of specs. Callers
// hold r.mu.
func refsMatching(r *Repository, specs []config.RefSpec) (map[plumbing.ReferenceName]plumbing.Hash, error) {
	out := map[plumbing.ReferenceName]plumbing.Hash{}
	iter, err := r.repo.Storer.IterReferences()
	if err != nil {
		return nil, err
	}
	err = iter.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() != plumbing.HashReference {
			return nil
		}
		for _, s := range specs {
			if dstMatches(s, ref.Name()) {
				out[ref.Name()] = ref.Hash()
			}
		}
		return nil
	})
	return out, err
}

// dstMatches reports whether name is a destination of refspec s.
func dstMatches(s config.RefSpec, name plumbing.ReferenceName) bool {
	spec := strings.TrimPrefix(string(s), "+")
	_, dst, ok := strings.Cut(spec, ":")
	if !ok {
		return false
	}
	if pre, post, wild := strings.Cut(dst, "*"); wild {
		n := string(name)
		return strings.HasPrefix(n, pre) && strings.HasSuffix(n, post) && len(n) > len(pre)+len(post)
	}
	return string(name) == dst
}
