package prompt

import (
	"hash/maphash"
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// DefaultEncoding is the tokenizer used for token counts: OpenAI's
// o200k_base, bundled in the binary, so counting works offline.
const DefaultEncoding = "o200k_base"

// maxCachedCounts bounds the token-count cache; past it the cache starts
// over (counts are cheap to recompute, memory is not free).
const maxCachedCounts = 8192

// TokenCounter counts tokens exactly with a BPE tokenizer and caches the
// counts by content, so a text is tokenised once however many requests,
// revisions or editor snapshots include it. Safe for concurrent use; the
// vocabulary is loaded on first use.
type TokenCounter struct {
	encoding string
	seed     maphash.Seed

	once  sync.Once
	codec tokenizer.Codec
	err   error

	mu    sync.Mutex
	cache map[uint64]int
}

// NewTokenCounter returns a counter for DefaultEncoding.
func NewTokenCounter() *TokenCounter {
	return &TokenCounter{encoding: DefaultEncoding, seed: maphash.MakeSeed(), cache: map[uint64]int{}}
}

// Encoding names the tokenizer, e.g. "o200k_base".
func (c *TokenCounter) Encoding() string { return c.encoding }

// Count returns the number of tokens in s. If the tokenizer cannot be
// loaded it falls back to an estimate of one token per four bytes, which is
// never expected with the bundled vocabulary.
func (c *TokenCounter) Count(s string) int {
	if s == "" {
		return 0
	}
	key := maphash.String(c.seed, s)
	c.mu.Lock()
	n, ok := c.cache[key]
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
	if len(c.cache) >= maxCachedCounts {
		clear(c.cache)
	}
	c.cache[key] = n
	c.mu.Unlock()
	return n
}
