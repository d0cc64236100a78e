package gitsync

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// WriteKeyTrailer is the commit trailer that records the idempotency key
// of a write the commit carries, one line per write: a retry of the
// write, on any daemon and after any restart, finds it in live's history
// and is answered with this commit instead of being applied again.
const WriteKeyTrailer = "Quire-Idempotency-Key"

// WriteKey is one write's idempotency key as its commit records it:
// "Quire-Idempotency-Key: <id> <path>", both %-escaped.
type WriteKey struct {
	// ID identifies the write; the daemon scopes a client's key by agent
	// and user.
	ID string
	// Path is the file the write answered with, relative to its agent.
	Path string
}

func (k WriteKey) trailer() string {
	return WriteKeyTrailer + ": " + escapeField(k.ID) + " " + escapeField(k.Path)
}

// escapeField %-escapes what cannot stand in one space-separated field of
// a trailer: white space, controls, bytes past ASCII and '%' itself.
func escapeField(s string) string {
	if s == "" {
		return "%00"
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || c == '%' {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func unescapeField(s string) (string, bool) {
	if s == "%00" {
		return "", true
	}
	u, err := url.PathUnescape(s)
	return u, err == nil
}

// WriteKeys returns the write keys a commit message records.
func WriteKeys(message string) []WriteKey {
	var out []WriteKey
	for _, line := range strings.Split(message, "\n") {
		v, ok := strings.CutPrefix(line, WriteKeyTrailer+": ")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 {
			continue
		}
		id, ok1 := unescapeField(f[0])
		p, ok2 := unescapeField(f[1])
		if ok1 && ok2 && id != "" {
			out = append(out, WriteKey{ID: id, Path: p})
		}
	}
	return out
}

// KeyedCommit is a commit on live's first-parent line and the write keys
// it brought to live.
type KeyedCommit struct {
	Commit plumbing.Hash
	Keys   []WriteKey
}

// RecentWriteKeys walks live's history from head back and returns the
// commits that brought write keys, newest first: each commit on head's
// first-parent line that a daemon made, and for a merge the daemon's
// write it merged (its second parent: a follower's write a quire host
// merged onto a live that had moved), under the merge's hash. The walk
// ends before stop (a merge of stop ends it after the merge), or after
// limit commits.
func (r *Repository) RecentWriteKeys(head, stop plumbing.Hash, limit int) ([]KeyedCommit, error) {
	// The storage lock is taken per commit: a long walk (the first after
	// a start) does not hold up reads.
	return writeKeysSince(func(h plumbing.Hash) (*object.Commit, error) {
		var c *object.Commit
		err := r.locked(func(st storer.EncodedObjectStorer) error {
			var err error
			c, err = object.GetCommit(st, h)
			return err
		})
		return c, err
	}, head, stop, limit)
}

// writeKeysSince is RecentWriteKeys reading commits with get.
func writeKeysSince(get func(plumbing.Hash) (*object.Commit, error), head, stop plumbing.Hash, limit int) ([]KeyedCommit, error) {
	var out []KeyedCommit
	h := head
	for n := 0; n < limit && !h.IsZero() && h != stop; n++ {
		c, err := get(h)
		if err != nil {
			return out, fmt.Errorf("read commit %s: %w", h, err)
		}
		var keys []WriteKey
		if byQuire(c) {
			keys = WriteKeys(c.Message)
		}
		end := len(c.ParentHashes) == 0
		if len(c.ParentHashes) > 1 {
			second := c.ParentHashes[1]
			end = second == stop
			if w, err := get(second); err == nil && len(w.ParentHashes) == 1 && byQuire(w) {
				keys = append(keys, WriteKeys(w.Message)...)
			}
		}
		if len(keys) > 0 {
			out = append(out, KeyedCommit{Commit: h, Keys: keys})
		}
		if end {
			break
		}
		h = c.ParentHashes[0]
	}
	return out, nil
}

func byQuire(c *object.Commit) bool { return strings.HasSuffix(c.Author.Email, "@quire.invalid") }

// maxKeyWalk bounds the history a host searches for a pushed write's
// keys (see rebaseLive).
const maxKeyWalk = 10000

// alreadyInLive is the start of the refusal of a write whose key live
// already holds; a pushing daemon reads it as stale (see staleReason):
// it fetches and finds the write there.
const alreadyInLive = "already in live"

// duplicateWrite returns the refusal of a daemon's write pushed on base
// whose keys live (cur) has taken since, through another daemon: a retry
// of the write landed first. "" when there is none.
func duplicateWrite(st storer.EncodedObjectStorer, write, base, cur plumbing.Hash) string {
	c, err := object.GetCommit(st, write)
	if err != nil {
		return ""
	}
	keys := WriteKeys(c.Message)
	if len(keys) == 0 {
		return ""
	}
	want := make(map[string]bool, len(keys))
	for _, k := range keys {
		want[k.ID] = true
	}
	get := func(h plumbing.Hash) (*object.Commit, error) { return object.GetCommit(st, h) }
	since, _ := writeKeysSince(get, cur, base, maxKeyWalk)
	for _, kc := range since {
		for _, k := range kc.Keys {
			if want[k.ID] {
				return fmt.Sprintf("%s: the write with %s %s is there at %s (a retry of it landed first); fetch live",
					alreadyInLive, WriteKeyTrailer, escapeField(k.ID), kc.Commit.String()[:12])
			}
		}
	}
	return ""
}
