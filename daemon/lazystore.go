package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/quirehq/quire/memory"
)

// lazyStore is a store that may not be connected yet: when PostgreSQL is
// unreachable at start, the daemon serves prompts anyway, keeps trying to
// open the store in the background, and answers memory searches (and
// fails index runs, which the indexer retries) until it is there.
type lazyStore struct {
	open func(ctx context.Context) (memory.Store, error)
	log  *slog.Logger

	mu      sync.RWMutex
	st      memory.Store
	lastErr error
	closed  bool
}

func (l *lazyStore) store() (memory.Store, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.st == nil {
		return nil, fmt.Errorf("the PostgreSQL store is not connected yet: %w", l.lastErr)
	}
	return l.st, nil
}

// connect tries to open the store until it succeeds or ctx ends.
func (l *lazyStore) connect(ctx context.Context) error {
	backoff := 500 * time.Millisecond
	for {
		octx, cancel := context.WithTimeout(ctx, 30*time.Second)
		st, err := l.open(octx)
		cancel()
		if err == nil {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.closed {
				return st.Close()
			}
			l.st, l.lastErr = st, nil
			l.log.Info("memory store connected")
			return nil
		}
		l.mu.Lock()
		l.lastErr = err
		l.mu.Unlock()
		l.log.Warn("memory store unreachable; retrying", "in", backoff, "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

func (l *lazyStore) Index(ctx context.Context, agent, commit string, docs []memory.Document) (memory.IndexStats, error) {
	st, err := l.store()
	if err != nil {
		return memory.IndexStats{}, err
	}
	return st.Index(ctx, agent, commit, docs)
}

func (l *lazyStore) Search(ctx context.Context, agent string, q memory.Query) ([]memory.Hit, error) {
	st, err := l.store()
	if err != nil {
		return nil, err
	}
	return st.Search(ctx, agent, q)
}

func (l *lazyStore) IndexedCommit(ctx context.Context, agent string) (string, error) {
	st, err := l.store()
	if err != nil {
		return "", err
	}
	return st.IndexedCommit(ctx, agent)
}

func (l *lazyStore) Chunks(ctx context.Context, agent string) ([]memory.Chunk, error) {
	st, err := l.store()
	if err != nil {
		return nil, err
	}
	return st.Chunks(ctx, agent)
}

func (l *lazyStore) Backfill(ctx context.Context) (int, error) {
	st, err := l.store()
	if err != nil {
		return 0, err
	}
	return st.Backfill(ctx)
}

func (l *lazyStore) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.st == nil {
		return nil
	}
	return l.st.Close()
}

var _ memory.Store = (*lazyStore)(nil)
