package gitsync

import (
	"context"
	"slices"
	"sync"
)

// QueueLock is a mutual exclusion lock granted in the order it was asked
// for: Unlock hands it to the longest waiter, so a writer that keeps
// coming back (a daemon's group committer) cannot overtake one that
// waits (a follower's push), as it can with sync.Mutex. LockContext
// bounds the wait. The zero value is an unlocked lock.
type QueueLock struct {
	mu      sync.Mutex
	held    bool
	waiters []chan struct{} // closed when the lock is handed to its waiter
}

// Lock waits for the lock.
func (l *QueueLock) Lock() { _ = l.LockContext(context.Background()) }

// LockContext waits for the lock until ctx ends; it returns ctx's error
// (and does not hold the lock) when it ended first.
func (l *QueueLock) LockContext(ctx context.Context) error {
	l.mu.Lock()
	if !l.held {
		l.held = true
		l.mu.Unlock()
		return nil
	}
	if err := ctx.Err(); err != nil {
		l.mu.Unlock()
		return err
	}
	ch := make(chan struct{})
	l.waiters = append(l.waiters, ch)
	l.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
	}
	l.mu.Lock()
	if i := slices.Index(l.waiters, ch); i >= 0 {
		l.waiters = slices.Delete(l.waiters, i, i+1)
		l.mu.Unlock()
		return ctx.Err()
	}
	l.mu.Unlock()
	// Handed over just as ctx ended: pass it on.
	l.Unlock()
	return ctx.Err()
}

// Unlock releases the lock to the longest waiter, if any.
func (l *QueueLock) Unlock() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.held {
		panic("gitsync: Unlock of an unlocked QueueLock")
	}
	if len(l.waiters) == 0 {
		l.held = false
		return
	}
	ch := l.waiters[0]
	l.waiters = slices.Delete(l.waiters, 0, 1)
	close(ch) // held stays true: the waiter owns it now
}
