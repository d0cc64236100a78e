package daemon

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/quirehq/quire/gitsync"
)

// Bounds of a source's index of recent write keys: the keys it keeps, and
// the commits of live's history it reads to find them (at the first write
// after a start, and after each move of live at most).
const (
	maxWriteKeys = 10000
	maxKeyWalk   = 10000
)

// writeKeyID scopes a client's idempotency key by agent and user: the
// same key from another user is another write.
func writeKeyID(agent, user, key string) string {
	return scopeField(agent) + ":" + scopeField(user) + ":" + key
}

// scopeField escapes ':' (and '%') so that the agent and the user never
// run into the key.
func scopeField(s string) string { return scopeEscaper.Replace(s) }

var scopeEscaper = strings.NewReplacer("%", "%25", ":", "%3A")

// internalKey names a write sent without a key to an upstream: should a
// push of it go unanswered and the write be pushed again, the upstream
// (a quire host) refuses whichever copy comes second.
func internalKey(agent, user string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return writeKeyID(agent, user, "~"+hex.EncodeToString(b[:]))
}

// keyHit is where live holds a write: the commit that brought it there
// and the file it answered with.
type keyHit struct {
	commit string
	path   string
}

// writeKeys is a source's index of the write keys in its live's recent
// history (gitsync.WriteKeyTrailer trailers), so that a retry is looked
// up in memory: kept up to date from the commits live gained since the
// last look, the oldest keys forgotten past maxWriteKeys. A --dir source,
// without commits, keeps its own writes' keys here only (until a
// restart).
type writeKeys struct {
	mu    sync.Mutex
	tip   plumbing.Hash // the newest commit indexed
	hits  map[string]keyHit
	order []string // IDs, oldest first
}

// sync indexes the keys of the commits from head back to the last one
// indexed.
func (k *writeKeys) sync(repo *gitsync.Repository, head plumbing.Hash) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if head.IsZero() || head == k.tip {
		return nil
	}
	kcs, err := repo.RecentWriteKeys(head, k.tip, maxKeyWalk)
	if err != nil {
		return err
	}
	for i := len(kcs) - 1; i >= 0; i-- {
		for _, key := range kcs[i].Keys {
			k.addLocked(key.ID, keyHit{commit: kcs[i].Commit.String(), path: key.Path})
		}
	}
	k.tip = head
	return nil
}

// lookup returns where live holds the write id.
func (k *writeKeys) lookup(id string) (keyHit, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	h, ok := k.hits[id]
	return h, ok
}

// add records a write this daemon made.
func (k *writeKeys) add(id string, h keyHit) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.addLocked(id, h)
}

func (k *writeKeys) addLocked(id string, h keyHit) {
	if k.hits == nil {
		k.hits = map[string]keyHit{}
	}
	if _, ok := k.hits[id]; !ok {
		k.order = append(k.order, id)
	}
	k.hits[id] = h
	for len(k.order) > maxWriteKeys {
		delete(k.hits, k.order[0])
		k.order = k.order[1:]
	}
}
