package daemon

import (
	"sync"

	"github.com/quirehq/quire/daemon/api"
)

// Bounds of a deployment's prompt cache, in bytes, so that no client can
// grow the daemon by sending distinct requests: an entry whose key and
// answers together exceed maxCachedPromptBytes is not kept (a request
// with a large "extra" is not worth keeping), and a cache that would
// pass maxPromptCacheBytes is emptied first.
const (
	maxCachedPromptBytes = 256 << 10
	maxPromptCacheBytes  = 32 << 20
)

// promptCache holds a deployment's prompt answers by request key
// (promptKey): assembly is deterministic, and a deployment never
// changes, so an answer holds until the deployment is replaced, and the
// cache goes with it. The zero value is ready to use.
type promptCache struct {
	mu      sync.RWMutex
	entries map[string]promptEntry
	bytes   int // what the keys and entries hold
}

// promptEntry is one request's answer, in the forms asked for so far:
// encoded as the local API sends it (api.Encode), and typed (MCP in
// process). Either may be nil.
type promptEntry struct {
	encoded []byte
	typed   *api.PromptResponse
}

// size is what e holds under key, in bytes (a typed answer counted by
// its prompt, which is most of it).
func (e promptEntry) size(key string) int {
	n := len(key) + len(e.encoded)
	if e.typed != nil {
		n += len(e.typed.Prompt)
	}
	return n
}

// lookup returns the entry of key (zero when there is none).
func (c *promptCache) lookup(key []byte) promptEntry {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.entries[string(key)]
}

// keep adds the forms e holds to key's entry, unless the entry would
// pass maxCachedPromptBytes.
func (c *promptCache) keep(key string, e promptEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.entries[key]
	if e.encoded == nil {
		e.encoded = old.encoded
	}
	if e.typed == nil {
		e.typed = old.typed
	}
	n := e.size(key)
	if n > maxCachedPromptBytes {
		return
	}
	if ok {
		c.bytes -= old.size(key)
	}
	if c.bytes+n > maxPromptCacheBytes {
		clear(c.entries)
		c.bytes = 0
	}
	if c.entries == nil {
		c.entries = map[string]promptEntry{}
	}
	c.entries[key] = e
	c.bytes += n
}
