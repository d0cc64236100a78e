package prompt

import (
	"crypto/sha256"
	"hash/maphash"
	"sync"

	"github.com/quirehq/quire/prompt/internal/o200k"
	"github.com/quirehq/quire/workspace"
)

// DefaultEncoding is the tokenizer used for token counts: OpenAI's
// o200k_base, bundled in the binary, so counting works offline. Its
// vocabulary is one embedded string (prompt/internal/o200k): loading it
// costs nothing and the garbage collector has nothing in it to scan.
const DefaultEncoding = "o200k_base"

// Bounds of the caches; past them a cache starts over (everything in it is
// cheap to recompute, memory is not free).
const (
	maxCachedCounts  = 8192
	maxCachedConfigs = 1024
	// maxIndexedBytes bounds the texts whose indexes are kept (an index
	// holds its text, and eight bytes for every 64 of it).
	maxIndexedBytes = 8 << 20
)

// minIndexedBytes is the size from which a counted text is indexed, so
// that what truncation keeps of it is counted without tokenising the
// head and tail again: smaller files are rarely cut, and quick to count.
const minIndexedBytes = 2048

// Tokenizer holds what is worth computing once across workspaces: exact token
// counts (by content) and parsed agent.yaml files (by path and content).
// Share one Tokenizer between the workspaces of successive revisions or editor
// snapshots (the daemon, the language server) so a new one only tokenises
// and parses files that changed. Safe for concurrent use.
type Tokenizer struct {
	encoding string
	seed     maphash.Seed

	once  sync.Once
	codec *o200k.Counter
	err   error

	mu      sync.Mutex
	counts  map[uint64]int
	configs map[uint64]parsedConfig
	// indexes holds how the larger texts counted were split, by content
	// key (made when first needed), and indexed their total size.
	indexes map[uint64]*o200k.Index
	indexed int

	store TokenStore // nil: counts live only in memory
}

// TokenStore keeps token counts beyond one process (the CLI keeps them in
// a file in the user's cache directory), keyed by ContentSum, so a text
// seen before needs no tokenizer. Implementations must be safe for
// concurrent use and may forget anything at any time.
type TokenStore interface {
	// TokenCount returns the count remembered for sum.
	TokenCount(sum [sha256.Size]byte) (int, bool)
	// RememberTokenCount records n tokens for sum.
	RememberTokenCount(sum [sha256.Size]byte, n int)
}

// ContentSum is the key of a token count in a TokenStore: the SHA-256 of
// the encoding's name, a zero byte and the text, so a count is found again
// only for exactly the same text under the same tokenizer.
func ContentSum(encoding, text string) [sha256.Size]byte {
	h := sha256.New()
	h.Write([]byte(encoding))
	h.Write([]byte{0})
	h.Write([]byte(text))
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// SetStore makes c look counts up in s before tokenising, and record
// there what it tokenises. Call it before the cache is used.
func (c *Tokenizer) SetStore(s TokenStore) { c.store = s }

type parsedConfig struct {
	cfg   Config
	probs []workspace.Problem
}

// NewTokenizer returns an empty cache counting tokens with DefaultEncoding.
func NewTokenizer() *Tokenizer {
	return &Tokenizer{encoding: DefaultEncoding, seed: maphash.MakeSeed(), counts: map[uint64]int{}, configs: map[uint64]parsedConfig{}}
}

// Encoding names the tokenizer, e.g. "o200k_base".
func (c *Tokenizer) Encoding() string { return c.encoding }

// Count returns the number of tokens in s. If the tokenizer cannot be
// loaded it falls back to an estimate of one token per four bytes, which is
// never expected with the bundled vocabulary.
func (c *Tokenizer) Count(s string) int {
	if s == "" {
		return 0
	}
	return c.countKeyed(contentKey(c.seed, s), s)
}

// contentKey is the key token counts are remembered by: a seeded 64-bit
// hash of s. maphash.Comparable hashes a string as Go's maps do, in one
// pass over it; maphash.String would feed it through in blocks of 128
// bytes, several times slower on a long file.
func contentKey(seed maphash.Seed, s string) uint64 { return maphash.Comparable(seed, s) }

// countKeyed is Count for a caller that already has s's key,
// contentKey(c.seed, s) (a file's fingerprint).
func (c *Tokenizer) countKeyed(key uint64, s string) int {
	if s == "" {
		return 0
	}
	return c.countWith(key, len(s), func() string { return s }, func(codec *o200k.Counter) (int, error) {
		return codec.Count(s)
	})
}

// countFile is countKeyed for a context file read whole, whose excerpts
// truncation may count next (countExcerpt): a file of minIndexedBytes or
// more keeps how it was split. Nothing else is indexed, so that whole
// prompts and excerpts do not push the files' indexes out.
func (c *Tokenizer) countFile(key uint64, s string) int {
	if len(s) < minIndexedBytes {
		return c.countKeyed(key, s)
	}
	return c.countWith(key, len(s), func() string { return s }, func(codec *o200k.Counter) (int, error) {
		n, x, err := codec.CountIndexed(s)
		if x != nil {
			c.keepIndex(key, x)
		}
		return n, err
	})
}

// countExcerpt returns the number of tokens of e, which truncation made
// of orig, whose content key is origKey; key is e's. When orig was counted
// recently, only the seams around e's marker are tokenised.
func (c *Tokenizer) countExcerpt(key, origKey uint64, orig string, e excerpt) int {
	c.mu.Lock()
	x := c.indexes[origKey]
	c.mu.Unlock()
	head, tail := len(e.head), len(orig)-len(e.tail)
	spliced := x != nil && x.Text() == orig && head <= tail && orig[:head] == e.head && orig[tail:] == e.tail
	return c.countWith(key, e.Len(), e.String, func(codec *o200k.Counter) (int, error) {
		if spliced {
			return codec.CountSpliced(x, head, e.marker, tail)
		}
		return codec.Count(e.String())
	})
}

// countWith returns the count remembered under key, else the store's
// count of text(), else what count says (size is the text's length, for
// an estimate should the tokenizer fail to load), and remembers it.
func (c *Tokenizer) countWith(key uint64, size int, text func() string, count func(*o200k.Counter) (int, error)) int {
	c.mu.Lock()
	n, ok := c.counts[key]
	c.mu.Unlock()
	if ok {
		return n
	}
	var sum [sha256.Size]byte
	found := false
	if c.store != nil {
		sum = ContentSum(c.encoding, text())
		n, found = c.store.TokenCount(sum)
	}
	if !found {
		c.once.Do(func() { c.codec, c.err = o200k.New() })
		err := c.err
		if err == nil {
			n, err = count(c.codec)
		}
		if err != nil {
			n = (size + 3) / 4
		} else if c.store != nil {
			c.store.RememberTokenCount(sum, n)
		}
	}
	c.mu.Lock()
	if len(c.counts) >= maxCachedCounts {
		clear(c.counts)
	}
	c.counts[key] = n
	c.mu.Unlock()
	return n
}

// keepIndex remembers x, the index of the text whose key is key.
func (c *Tokenizer) keepIndex(key uint64, x *o200k.Index) {
	size := len(x.Text())
	if size > maxIndexedBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.indexes == nil || c.indexed+size > maxIndexedBytes {
		c.indexes, c.indexed = map[uint64]*o200k.Index{}, 0
	}
	if old := c.indexes[key]; old != nil {
		c.indexed -= len(old.Text())
	}
	c.indexes[key] = x
	c.indexed += size
}

// cachedCount returns the count remembered under key, if any.
func (c *Tokenizer) cachedCount(key uint64) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.counts[key]
	return n, ok
}

// config is ParseConfig, remembered by its inputs. The result is shared:
// callers must not modify it.
func (c *Tokenizer) config(path, defaultName string, data []byte) (Config, []workspace.Problem) {
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
