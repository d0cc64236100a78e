package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/pgstore"
	"github.com/quirehq/quire/workspace"
)

// indexer keeps the store in step with the deployments. It is a
// coalescing runner: each source has at most one pending deployment (a
// newer one replaces it), and a size-one wake-up channel collapses a
// burst of deploys into one run, so a burst of pushes indexes only the
// newest commit. A failed run (the store is away) is retried with
// backoff until it succeeds or a newer deployment replaces it. Runs
// that follow each other are paced (see pace): under a stream of appends
// one run takes in every commit made while the last one ran and rested,
// so the indexer's CPU is bounded however fast the commits come.
type indexer struct {
	sources *sourceSet
	store   memory.Store
	events  *broker
	metrics *metrics
	log     *slog.Logger
	// timeout bounds one agent's index run.
	timeout time.Duration

	mu      sync.Mutex
	pending map[*source]*deployment
	wake    chan struct{}
	// unembedded is set when an index run left chunks without vectors
	// (the embedder failed); Backfill is retried until it embeds them.
	unembedded bool
	// lastEnd and lastTook are when the last run ended and how long it
	// took.
	lastEnd  time.Time
	lastTook time.Duration

	// docs keeps each agent's memory documents by blob id between runs
	// (memory.DocumentCache), so a run reads only what changed.
	docsMu sync.Mutex
	docs   map[string]*memory.DocumentCache
}

// documents is agent name's cache of memory documents.
func (ix *indexer) documents(name string) *memory.DocumentCache {
	ix.docsMu.Lock()
	defer ix.docsMu.Unlock()
	if ix.docs == nil {
		ix.docs = map[string]*memory.DocumentCache{}
	}
	c := ix.docs[name]
	if c == nil {
		c = &memory.DocumentCache{}
		ix.docs[name] = c
	}
	return c
}

// indexRest is how long, relative to the run before, the indexer rests
// before a run that follows it at once: at 1 it is busy at most half the
// time under a stream of commits, and each run takes in what the commits
// changed meanwhile. It rests at least minIndexRest: a run's cost is
// mostly what changed, but part of it is the agent's size (its
// documents listed, its index's arrays), and under a stream of appends
// a run every minIndexRest takes in many commits' entries for that part
// once. A run after a pause longer than that starts at once, and no rest
// is longer than maxIndexRest (a cold start's run of every agent, or one
// that waited out a store's timeout, says nothing of the next).
const (
	indexRest    = 1
	minIndexRest = 50 * time.Millisecond
	maxIndexRest = time.Second
)

// restWait is how long, at now, the indexer still rests after a run
// that ended at end and took took.
func restWait(now, end time.Time, took time.Duration) time.Duration {
	return end.Add(min(max(indexRest*took, minIndexRest), maxIndexRest)).Sub(now)
}

// rest waits until the indexer has rested after its last run (see
// indexRest), reporting false when ctx ended first.
func (ix *indexer) rest(ctx context.Context) bool {
	wait := restWait(time.Now(), ix.lastEnd, ix.lastTook)
	if wait <= 0 {
		return true
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func newIndexer(sources *sourceSet, store memory.Store, events *broker, m *metrics, log *slog.Logger, timeout time.Duration) *indexer {
	return &indexer{sources: sources, store: store, events: events, metrics: m, log: log, timeout: timeout,
		pending: map[*source]*deployment{}, wake: make(chan struct{}, 1)}
}

func (ix *indexer) enqueue(s *source, dep *deployment) {
	s.index.queued(dep)
	ix.mu.Lock()
	ix.pending[s] = dep
	ix.mu.Unlock()
	select {
	case ix.wake <- struct{}{}:
	default:
	}
}

func (ix *indexer) run(ctx context.Context) error {
	backoff := time.Duration(0)
	for {
		var timer <-chan time.Time
		if backoff > 0 {
			timer = time.After(backoff)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ix.wake:
		case <-timer:
		}
		if !ix.rest(ctx) {
			return nil
		}
		start := time.Now()
		ix.mu.Lock()
		work := ix.pending
		ix.pending = map[*source]*deployment{}
		ix.mu.Unlock()
		failed := ix.unembedded && !ix.backfill(ctx)
		for s, dep := range work {
			if s.deploys.current() != dep {
				continue // a newer deployment is on its way
			}
			if !ix.index(ctx, s, dep) {
				failed = true
				ix.mu.Lock()
				if _, newer := ix.pending[s]; !newer {
					ix.pending[s] = dep
				}
				ix.mu.Unlock()
			}
		}
		ix.lastEnd = time.Now()
		ix.lastTook = ix.lastEnd.Sub(start)
		switch {
		case !failed && !ix.unembedded:
			backoff = 0
		case backoff == 0:
			backoff = 500 * time.Millisecond
		case backoff < 30*time.Second:
			backoff *= 2
		}
	}
}

// index indexes every agent of dep, reporting whether all succeeded.
func (ix *indexer) index(ctx context.Context, s *source, dep *deployment) bool {
	ok := true
	for _, name := range dep.names {
		if ctx.Err() != nil {
			return false
		}
		a := dep.agents[name]
		start := time.Now()
		docs, problems, err := ix.documents(name).Documents(dep.fsys, a.agent.Dir)
		for _, p := range problems {
			ix.log.Warn("memory document skipped", "agent", name, "problem", p.String())
		}
		notIndexed := notIndexedError(problems)
		var stats memory.IndexStats
		if err == nil {
			// A store that stops answering (a blackholed connection) must
			// not stall indexing silently: the run times out, is reported,
			// and is retried with backoff.
			ictx, cancel := context.WithTimeout(ctx, ix.timeout)
			stats, err = ix.store.Index(ictx, name, dep.commit, docs)
			if err != nil && ictx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
				err = fmt.Errorf("the memory store did not answer within %v: %w", ix.timeout, err)
			}
			cancel()
		}
		indexedCommit := dep.commit
		if errors.Is(err, pgstore.ErrOlder) {
			// Another daemon indexed a newer commit: the store keeps it,
			// and status says what the store holds.
			if c, cerr := ix.store.IndexedCommit(ctx, name); cerr == nil {
				indexedCommit, err = c, nil
				ix.log.Debug("the store holds a newer commit; not indexed over it", "agent", name, "commit", short(dep.commit), "store", short(c))
			}
		}
		ix.metrics.indexed(time.Since(start), err)
		s.index.ran(indexRun{agent: name, commit: dep.commit, indexed: indexedCommit, stats: stats, notIndexed: notIndexed, err: err},
			s.deploys.current)
		if err != nil {
			ok = false
			ix.log.Warn("index failed", "agent", name, "commit", short(dep.commit), "err", err)
			ix.events.publish(api.Event{Type: "error", Agent: name, Source: s.id(), Commit: dep.commit, Message: fmt.Sprintf("indexing failed: %v", err)})
			continue
		}
		if stats.EmbedError != nil || stats.Pending > 0 {
			ix.log.Warn("embedding failed; text indexed, vectors pending", "agent", name, "pending", stats.Pending, "err", stats.EmbedError)
			ix.unembedded = true
		}
		ix.log.Log(ctx, dep.logLevel, "indexed", "agent", name, "commit", short(dep.commit), "documents", stats.Documents, "changed", stats.Changed, "chunks", stats.Chunks, "took", time.Since(start))
		ix.events.publish(api.Event{Type: "index", Agent: name, Source: s.id(), Commit: dep.commit, Chunks: stats.Chunks,
			Message: fmt.Sprintf("%d chunks re-indexed (%d documents changed)", stats.Chunks, stats.Changed)})
	}
	return ok
}

// backfill embeds chunks an earlier run left without vectors, reporting
// whether none are left.
func (ix *indexer) backfill(ctx context.Context) bool {
	n, err := ix.store.Backfill(ctx)
	if err != nil {
		ix.log.Warn("embedding backfill failed", "embedded", n, "err", err)
		return false
	}
	ix.log.Info("embedding backfill", "embedded", n)
	ix.unembedded = false
	return true
}

// retryAll queues every source's current deployment again (after the
// store connected).
func (ix *indexer) retryAll() {
	for _, s := range ix.sources.all() {
		if dep := s.deploys.current(); dep != nil {
			ix.enqueue(s, dep)
		}
	}
}

// waitIndexed waits until every agent of dep is indexed at dep's commit
// (or a later deployment replaced dep), reporting whether that happened
// before ctx ended.
func waitIndexed(ctx context.Context, s *source, dep *deployment) bool {
	for {
		done, _, changed := s.index.progress(dep)
		if done || s.deploys.current() != dep {
			return done
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
	}
}

// waitCurrentIndexed waits until the store holds s's deployed revision
// (whichever is deployed by then), returning the error of its index run
// when that failed, or ctx's.
func waitCurrentIndexed(ctx context.Context, s *source) error {
	for {
		dep := s.deploys.current()
		if dep == nil {
			return nil // nothing deployed: nothing to index
		}
		done, failed, changed := s.index.progress(dep)
		switch {
		case done:
			return nil
		case failed != nil:
			return failed
		case s.deploys.current() != dep:
			continue // replaced meanwhile, maybe indexed already: look again
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// maxNotIndexedShown bounds the files status names as not indexed.
const maxNotIndexedShown = 3

// notIndexedError is what status says of the memory files an index run
// left out (memory.CodeNotIndexed: content no store can hold, pushed
// before the rules or in a --dir working tree): each file with its line
// and why, "" when there are none.
func notIndexedError(problems []workspace.Problem) string {
	var files []string
	for _, p := range problems {
		if p.Code != memory.CodeNotIndexed {
			continue
		}
		if len(files) == maxNotIndexedShown {
			files = append(files, "… (the daemon log names every file)")
			break
		}
		p.Severity = "" // path:line: message
		files = append(files, p.String())
	}
	return strings.Join(files, "; ")
}
