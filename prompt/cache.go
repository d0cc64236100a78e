package prompt

import (
	"hash/maphash"
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// DefaultEncoding is the tokenizer used for token counts: OpenAI's
// o200k_base, bundled in the binary, so counting works offline.
const DefaultEncoding = "o200k_base"

// Bounds of the caches; past them a cache starts over (everything in it is
// cheap to recompute, memory is not free).
const (
	maxCachedCounts  = 8192
	maxCachedConfigs = 1024
)

// Cache holds what is worth computing once across workspaces: exact token
// counts (by content) and parsed agent.yaml files (by path and content).
// Share one Cache between the workspaces of successive revisions or editor
// snapshots (the daemon, the language server) so a new one only tokenises
// and parses files that changed. Safe for concurrent use; the tokenizer's
// vocabulary is loaded on first use.
type Cache struct {
	encoding string
	seed     maphash.Seed

	once  sync.Once
	codec tokenizer.Codec
	err   error

	mu      sync.Mutex
	counts  map[uint64]int
	configs map[uint64]parsedConfig
}

type parsedConfig struct {
	cfg   Config
	probs []Problem
}

// NewCache returns an empty cache counting tokens with DefaultEncoding.
func NewCache() *Cache {
	return &Cache{encoding: DefaultEncoding, seed: maphash.MakeSeed(), counts: map[uint64]int{}, configs: map[uint64]parsedConfig{}}
}

// Encoding names the tokenizer, e.g. "o200k_base".
func (c *Cache) Encoding() string { return c.encoding }

// Count returns the number of tokens in s. If the tokenizer cannot be
// loaded it falls back to an estimate of one token per four bytes, which is
// never expected with the bundled vocabulary.
func (c *Cache) Count(s string) int {
	if s == "" {
		return 0
	}
	return c.countKeyed(maphash.String(c.seed, s), s)
}

// countKeyed is Count for a caller that already has s's key,
// maphash.String(c.seed, s) (a file's fingerprint).
func (c *Cache) countKeyed(key uint64, s string) int {
	if s == "" {
		return 0
	}
	c.mu.Lock()
	n, ok := c.counts[key]
	c.mu.Unlock()
	if ok {
		return n
	}
	c.once.Do(func() { c.codec, c.err = tokenizer.Get(tokenizer.Encoding(c.encoding)) })
	err := c.err
	if err == nil {
		n, err = c.codec.Count(s)
	}
	if err != nil {
		n = (len(s) + 3) / 4
	}
	c.mu.Lock()
	if len(c.counts) >= maxCachedCounts {
		clear(c.counts)
	}
	c.counts[key] = n
	c.mu.Unlock()
	return n
}

// cachedCount returns the count remembered under key, if any.
func (c *Cache) cachedCount(key uint64) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.counts[key]
	return n, ok
}

// config is ParseConfig, remembered by its inputs. The result is shared:
// callers must not modify it.
func (c *Cache) config(path, defaultName string, data []byte) (Config, []Problem) {
	var h maphash.Hash
	h.SetSeed(c.seed)
	h.WriteString(path)
	h.WriteByte(0)
	h.WriteString(defaultName)
	h.WriteByte(0)
	h.Write(data)
	key := h.Sum64()
	c.mu.Lock()
	p, ok := c.configs[key]
	c.mu.Unlock()
	if ok {
		return p.cfg, p.probs
	}
	cfg, probs := ParseConfig(path, defaultName, data)
	c.mu.Lock()
	if len(c.configs) >= maxCachedConfigs {
		clear(c.configs)
	}
	c.configs[key] = parsedConfig{cfg, probs}
	c.mu.Unlock()
	return cfg, probs
}
