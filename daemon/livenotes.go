package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/quirehq/quire/memory"
)

// liveChannel is the channel on which daemons sharing a PostgreSQL store
// announce a new live commit (the store scopes it to its schema).
const liveChannel = "quire_live"

// heardKeep is how many announced commits a daemon remembers per source,
// so that deploying one of them (after the fetch the announcement
// triggered) is not announced again.
const heardKeep = 64

// liveNote is the payload of a notification on liveChannel.
type liveNote struct {
	// Repo names the repository: a hosted repository's name, or the last
	// element of a followed upstream's URL without .git (the name of the
	// repository there). Daemons following a repository of that name
	// fetch.
	Repo string `json:"repo"`
	// Commit is the new live commit.
	Commit string `json:"commit"`
	// From is the announcing daemon (random per process): a daemon
	// ignores its own notes.
	From string `json:"from"`
}

// pubSub is a store that connects the daemons sharing it
// (pgstore.Store: LISTEN/NOTIFY).
type pubSub interface {
	Notify(ctx context.Context, channel, payload string) error
	Listen(ctx context.Context, channel string, onConnect func(first bool), onNotify func(payload string)) error
}

// liveNotes announces every new live commit this daemon deploys to the
// other daemons on its PostgreSQL store, and makes this daemon's
// followers fetch when another announces a commit they lack: a write on
// one daemon is served by the others within a fetch, not a --poll.
// Without a PostgreSQL store it does nothing.
type liveNotes struct {
	id      string
	wake    chan struct{}
	store   memory.Store
	sources *sourceSet
	log     *slog.Logger

	mu      sync.Mutex
	off     bool
	pending map[string]liveNote // by Repo: only the newest commit matters
	heard   map[*source][]string
}

func newLiveNotes(store memory.Store, sources *sourceSet, log *slog.Logger) *liveNotes {
	var b [8]byte
	rand.Read(b[:])
	return &liveNotes{id: hex.EncodeToString(b[:]), wake: make(chan struct{}, 1), store: store, sources: sources, log: log,
		pending: map[string]liveNote{}, heard: map[*source][]string{}}
}

// deployed queues the announcement of commit, just deployed from s. A
// commit another daemon announced is not announced again; a commit this
// daemon fetched without an announcement (a push to the upstream, a
// webhook, a poll) is: the first daemon to see it tells the others.
func (n *liveNotes) deployed(s *source, commit string) {
	if n == nil || s.kind == kindDir {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.off || slices.Contains(n.heard[s], commit) {
		return
	}
	n.pending[s.rootName] = liveNote{Repo: s.rootName, Commit: commit, From: n.id}
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

func (n *liveNotes) take() []liveNote {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]liveNote, 0, len(n.pending))
	for k, note := range n.pending {
		out = append(out, note)
		delete(n.pending, k)
	}
	return out
}

func (n *liveNotes) hear(s *source, commit string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	h := n.heard[s]
	if slices.Contains(h, commit) {
		return
	}
	if len(h) >= heardKeep {
		h = h[1:]
	}
	n.heard[s] = append(h, commit)
}

// run sends this daemon's announcements and, when it follows an
// upstream, listens to the others', until ctx ends. Without a PostgreSQL
// store it returns at once (--poll and the webhook remain).
func (n *liveNotes) run(ctx context.Context) error {
	ps := n.pubSub(ctx)
	if ps == nil {
		n.mu.Lock()
		n.off = true
		clear(n.pending)
		n.mu.Unlock()
		return nil
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	if slices.ContainsFunc(n.sources.all(), func(s *source) bool { return s.kind == kindUpstream }) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A store that connected late missed what was announced
			// before: catch up at the first connection too.
			_, late := n.store.(*lazyStore)
			connected := func(first bool) { n.connected(first && !late) }
			// Listen only returns when ctx ends.
			_ = ps.Listen(ctx, liveChannel, connected, n.heardNote)
		}()
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-n.wake:
		}
		for _, note := range n.take() {
			b, err := json.Marshal(note)
			if err != nil {
				continue
			}
			nctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err = ps.Notify(nctx, liveChannel, string(b))
			cancel()
			if err != nil && ctx.Err() == nil {
				n.log.Warn("announcing a new live commit failed; the other daemons see it at their next fetch",
					"repo", note.Repo, "commit", short(note.Commit), "err", err)
			}
		}
	}
}

// pubSub is the store as a pubSub: the PostgreSQL store, once connected
// (waiting for a store that connects in the background), or nil.
func (n *liveNotes) pubSub(ctx context.Context) pubSub {
	switch st := n.store.(type) {
	case pubSub:
		return st
	case *lazyStore:
		for {
			if s, err := st.store(); err == nil {
				ps, _ := s.(pubSub)
				return ps
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(500 * time.Millisecond):
			}
		}
	}
	return nil
}

// connected makes every follower fetch after the notification
// connection came back (first is false): announcements sent meanwhile
// are lost.
func (n *liveNotes) connected(first bool) {
	if first {
		return
	}
	for _, s := range n.sources.all() {
		if s.up != nil {
			s.up.trigger()
		}
	}
}

// heardNote makes the followers of the announced repository fetch, unless
// the note is this daemon's own or they already have the commit.
func (n *liveNotes) heardNote(payload string) {
	var note liveNote
	if err := json.Unmarshal([]byte(payload), &note); err != nil || note.Commit == "" {
		n.log.Debug("ignoring a malformed live announcement", "payload", payload)
		return
	}
	if note.From == n.id {
		return
	}
	for _, s := range n.sources.all() {
		if s.up == nil || s.rootName != note.Repo {
			continue
		}
		n.hear(s, note.Commit)
		head, _, err := s.head()
		switch {
		case err == nil && head.String() == note.Commit:
		case s.knows(note.Commit):
			// Most likely this daemon made the commit and pushed it:
			// its mirror moves once the push is acknowledged, just
			// after the upstream announced it. Fetch only if that did
			// not happen (or the commit is older than what it has).
			time.AfterFunc(recheckOwn, func() {
				if !s.holds(note.Commit) {
					s.up.trigger()
				}
			})
		default:
			n.log.Debug("another daemon announced a new live commit; fetching", "source", s.id(), "commit", short(note.Commit))
			s.up.trigger()
		}
	}
}

// recheckOwn is how long a daemon that holds an announced commit it does
// not deploy yet (its own write, acknowledged by the upstream a moment
// ago) waits before it fetches after all.
const recheckOwn = 250 * time.Millisecond
