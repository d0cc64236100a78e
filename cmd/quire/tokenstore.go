package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/quirehq/quire/internal/replace"
	"github.com/quirehq/quire/internal/xdg"
)

// maxStoredCounts bounds the token-count file; past it the oldest counts
// are forgotten.
const maxStoredCounts = 4096

// tokenFile is a prompt.TokenStore in one file of the user's cache
// directory: a line "<sha256 hex> <count>" per text, keyed by
// prompt.ContentSum, so a count is only ever found for exactly the text it
// was counted for. Unreadable or malformed lines are ignored; the file is
// replaced atomically (write, then rename), so concurrent processes at
// worst lose each other's new counts.
type tokenFile struct {
	path string

	once   sync.Once
	mu     sync.Mutex
	counts map[[sha256.Size]byte]int
	order  [][sha256.Size]byte // file order, oldest first
	added  int
}

// tokenFilePath is $XDG_CACHE_HOME/quire/tokens-<encoding> (or under
// ~/.cache); "" when neither is known.
func tokenFilePath(getenv func(string) string, encoding string) string {
	dir := xdg.CacheDir(getenv)
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "tokens-"+encoding)
}

func (t *tokenFile) load() {
	t.counts = map[[sha256.Size]byte]int{}
	data, err := os.ReadFile(t.path)
	if err != nil {
		return
	}
	for line := range bytes.Lines(data) {
		line = bytes.TrimSuffix(line, []byte("\n"))
		hexSum, num, ok := bytes.Cut(line, []byte(" "))
		var sum [sha256.Size]byte
		if !ok || len(hexSum) != 2*sha256.Size {
			continue
		}
		if _, err := hex.Decode(sum[:], hexSum); err != nil {
			continue
		}
		n, err := strconv.Atoi(string(num))
		if err != nil || n < 0 {
			continue
		}
		if _, dup := t.counts[sum]; !dup {
			t.order = append(t.order, sum)
		}
		t.counts[sum] = n
	}
}

// TokenCount implements prompt.TokenStore.
func (t *tokenFile) TokenCount(sum [sha256.Size]byte) (int, bool) {
	t.once.Do(t.load)
	t.mu.Lock()
	defer t.mu.Unlock()
	n, ok := t.counts[sum]
	return n, ok
}

// RememberTokenCount implements prompt.TokenStore.
func (t *tokenFile) RememberTokenCount(sum [sha256.Size]byte, n int) {
	t.once.Do(t.load)
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.counts[sum]; !ok {
		t.order = append(t.order, sum)
	}
	t.counts[sum] = n
	t.added++
}

// save writes the file if counts were added; errors are returned for the
// caller to log, never to fail a command over.
func (t *tokenFile) save() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.added == 0 {
		return nil
	}
	order := t.order
	if len(order) > maxStoredCounts {
		order = order[len(order)-maxStoredCounts:]
	}
	var b bytes.Buffer
	for _, sum := range order {
		fmt.Fprintf(&b, "%x %d\n", sum, t.counts[sum])
	}
	if err := os.MkdirAll(filepath.Dir(t.path), 0o700); err != nil {
		return fmt.Errorf("token cache: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(t.path), ".tokens-*")
	if err != nil {
		return fmt.Errorf("token cache: %w", err)
	}
	_, err = tmp.Write(b.Bytes())
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = replace.File(tmp.Name(), t.path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("token cache %s: %w", t.path, err)
	}
	t.added = 0
	return nil
}
