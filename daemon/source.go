package daemon

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/memory"
)

type sourceKind string

const (
	kindRepo     sourceKind = "repo"
	kindUpstream sourceKind = "upstream"
	kindDir      sourceKind = "dir"
)

// source is one source of truth: a hosted repository, a followed upstream
// or a working tree. Every agent knows its source.
type source struct {
	kind     sourceKind
	name     string // repository name, upstream URL or directory
	rootName string // the agent name of a repository without agent.yaml
	repo     *gitsync.Repository
	refs     []string // the deployed ref, first that resolves
	dir      string

	// cur is the deployment requests read: swapped atomically, so a
	// request sees the old or the new revision, never a mix.
	cur atomic.Pointer[deployment]

	deployMu sync.Mutex // one deploy at a time
	// writeMu: one commit by the daemon at a time, granted in arrival
	// order; a write's wait for it counts against its deadline.
	writeMu gitsync.QueueLock
	queue   writeQueue // API writes waiting for their commit
	keys    writeKeys  // the write keys in live's recent history
	seq     atomic.Uint64

	// follower fetches an upstream source (nil otherwise), remote; name
	// is remote's URL, which prints without the credential.
	follower *gitsync.Follower
	remote   gitsync.Remote
	fetched  chan struct{} // a fetch moved refs

	mu       sync.Mutex
	lastErr  string
	fetchErr string                       // the last fetch's error ("" when it worked)
	writeErr string                       // the last write's upstream error ("" when it worked)
	indexed  map[string]string            // agent → indexed commit
	stats    map[string]memory.IndexStats // agent → stats of the last index run
	indexErr map[string]string            // agent → last index error
	// notIndexed is, per agent, the memory files the last index run
	// left out (notIndexedError).
	notIndexed map[string]string
	// answered is when the upstream last answered a fetch or took a
	// write: while it does not, what is served lags it by that much.
	answered time.Time
	// unindexedSince is, per agent, when the oldest deployment not yet
	// indexed was deployed: the lag that status reports, which a newer
	// deployment does not reset.
	unindexedSince map[string]time.Time
	notify         chan struct{} // closed and replaced after each index run
}

func (s *source) init() {
	s.indexed = map[string]string{}
	s.stats = map[string]memory.IndexStats{}
	s.indexErr = map[string]string{}
	s.notIndexed = map[string]string{}
	s.unindexedSince = map[string]time.Time{}
	s.notify = make(chan struct{})
	s.answered = time.Now() // until it fails, as of the start
}

func (s *source) id() string { return string(s.kind) + ":" + s.name }

// upstreamLive and upstreamMain are an upstream's branches as fetched.
const (
	upstreamLive = plumbing.ReferenceName("refs/remotes/upstream/live")
	upstreamMain = plumbing.ReferenceName("refs/remotes/upstream/main")
)

func (s *source) setFetchError(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		s.fetchErr, s.writeErr = "", ""
		s.answered = time.Now()
	} else {
		s.fetchErr = err.Error()
	}
}

// setWriteError records the outcome of a write to the upstream: an
// error that says it did not answer shows in the status at once, without
// waiting for the next fetch to fail.
func (s *source) setWriteError(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		s.writeErr = ""
		s.answered = time.Now()
	} else {
		s.writeErr = err.Error()
	}
}

// upstreamLag is how long the upstream has not answered while its
// fetches or writes fail (0 when it answers). Callers hold s.mu.
func (s *source) upstreamLag() time.Duration {
	if s.kind != kindUpstream || s.fetchErr == "" && s.writeErr == "" {
		return 0
	}
	return max(time.Since(s.answered), time.Millisecond)
}

func (s *source) setError(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		s.lastErr = ""
	} else {
		s.lastErr = err.Error()
	}
}

// head resolves the deployed ref.
func (s *source) head() (plumbing.Hash, string, error) {
	var last error
	for _, r := range s.refs {
		h, err := s.repo.Resolve(r)
		if err == nil {
			return h, r, nil
		}
		last = err
	}
	return plumbing.ZeroHash, s.refs[0], last
}

// waitIndexed waits until every agent of dep is indexed at dep's commit
// (or a later one replaced it), reporting whether that happened before
// ctx ended.
func (s *source) waitIndexed(ctx context.Context, dep *deployment) bool {
	for {
		s.mu.Lock()
		done := true
		for _, name := range dep.names {
			if s.indexed[name] != dep.commit {
				done = false
			}
		}
		ch := s.notify
		s.mu.Unlock()
		if done || s.cur.Load() != dep {
			return done
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}
