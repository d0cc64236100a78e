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

// RecentWriteKeys returns the commits of live's history from head back
// that brought write keys, newest first: the commits on head's
// first-parent line (live's values) that are not on stop's (the last
// commit looked at; zero for none), each with its keys when a daemon made
// it, and for a merge the keys of the daemon's write it merged (its
// second parent: a follower's write a quire host merged onto a live that
// had moved). At most limit commits of each line are read.
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
	line, err := firstParentsSince(get, head, stop, limit)
	var out []KeyedCommit
	for _, c := range line {
		var keys []WriteKey
		if byQuire(c) {
			keys = WriteKeys(c.Message)
		}
		if len(c.ParentHashes) > 1 {
			if w, err := get(c.ParentHashes[1]); err == nil && len(w.ParentHashes) == 1 && byQuire(w) {
				keys = append(keys, WriteKeys(w.Message)...)
			}
		}
		if len(keys) > 0 {
			out = append(out, KeyedCommit{Commit: c.Hash, Keys: keys})
		}
	}
	return out, err
}

// firstParentsSince returns the commits on head's first-parent line that
// are not on stop's, newest first. Both lines are walked in step, so the
// walk is about twice as long as the lines are apart (at most limit
// commits each): stop is usually live a few writes ago, or a write that
// was merged onto live since.
func firstParentsSince(get func(plumbing.Hash) (*object.Commit, error), head, stop plumbing.Hash, limit int) ([]*object.Commit, error) {
	var line []*object.Commit
	onHead := map[plumbing.Hash]int{} // commit → its index in line
	onStop := map[plumbing.Hash]bool{}
	a, b := head, stop
	for n := 0; n < limit && !(a.IsZero() && b.IsZero()); n++ {
		if !a.IsZero() {
			if onStop[a] {
				return line, nil
			}
			c, err := get(a)
			if err != nil {
				return line, fmt.Errorf("read commit %s: %w", a, err)
			}
			onHead[a] = len(line)
			line = append(line, c)
			a = firstParent(c)
		}
		if !b.IsZero() {
			if i, ok := onHead[b]; ok {
				return line[:i], nil
			}
			onStop[b] = true
			c, err := get(b)
			if err != nil {
				return line, fmt.Errorf("read commit %s: %w", b, err)
			}
			b = firstParent(c)
		}
	}
	return line, nil
}

func firstParent(c *object.Commit) plumbing.Hash {
	if len(c.ParentHashes) == 0 {
		return plumbing.ZeroHash
	}
	return c.ParentHashes[0]
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
