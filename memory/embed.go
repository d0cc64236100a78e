package memory

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/quirehq/quire/memory/bm25"
)

// Embedder turns texts into vectors of a fixed dimension.
type Embedder interface {
	// Model names the model; with Dimensions it keys the embedding cache
	// and tells a store when its vectors must be rebuilt.
	Model() string
	// Dimensions is the length of every vector; 0 means the embedder
	// produces none and search is full-text only.
	Dimensions() int
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// None is the embedder of full-text-only search: it has no dimensions and
// embeds nothing.
type None struct{}

// Model returns "none".
func (None) Model() string { return "none" }

// Dimensions returns 0.
func (None) Dimensions() int { return 0 }

// Embed returns a nil vector for each text.
func (None) Embed(_ context.Context, texts []string) ([][]float32, error) {
	return make([][]float32, len(texts)), nil
}

// Enabled reports whether e produces vectors.
func Enabled(e Embedder) bool { return e != nil && e.Dimensions() > 0 }

// DefaultBuiltinDimensions is the vector length of the builtin embedder.
const DefaultBuiltinDimensions = 384

// Builtin is the offline, deterministic embedder that needs no model: it
// hashes the words of a text (bm25.Tokenize) and their character trigrams into a vector
// (feature hashing) and L2-normalises it. It is lexical, not semantic:
// texts are close when they share words or parts of words ("deploy" and
// "deployment"), never because they mean the same thing ("car" and
// "automobile" are unrelated to it). Configure an OpenAI-compatible
// embedder for semantic search.
type Builtin struct {
	// Dims is the vector length; 0 means DefaultBuiltinDimensions.
	Dims int
}

// Model names the builtin embedder and its version.
func (b Builtin) Model() string { return fmt.Sprintf("builtin-hash-v2-%d", b.Dimensions()) }

// Dimensions returns the vector length.
func (b Builtin) Dimensions() int {
	if b.Dims <= 0 {
		return DefaultBuiltinDimensions
	}
	return b.Dims
}

// Embed returns the hashed feature vector of each text. A large batch (a
// bulk index) is split over the available cores.
func (b Builtin) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	workers := min(runtime.GOMAXPROCS(0), len(texts)/builtinBatchPerCore)
	if workers <= 1 {
		for i, t := range texts {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			out[i] = b.vector(t)
		}
		return out, nil
	}
	var wg sync.WaitGroup
	per := (len(texts) + workers - 1) / workers
	for lo := 0; lo < len(texts); lo += per {
		hi := min(lo+per, len(texts))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi && ctx.Err() == nil; i++ {
				out[i] = b.vector(texts[i])
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// builtinBatchPerCore is the batch size from which Builtin.Embed uses
// another core: below it, starting goroutines costs more than it saves.
const builtinBatchPerCore = 256

func (b Builtin) vector(text string) []float32 {
	dims := uint64(b.Dimensions())
	v := make([]float32, dims)
	add := func(sum uint64, weight float32) {
		if sum>>63 == 1 {
			weight = -weight
		}
		v[sum%dims] += weight
	}
	var padded []byte
	bm25.EachToken(text, nil, func(w []byte) {
		add(fnv1aBytes(fnv1a(fnvOffset, "w:"), w), 1)
		// Character trigrams of " word ", on code point boundaries; a
		// word of n code points has n of them, and together they weigh
		// as much as the word, so that the trigrams every word shares
		// ("ing", "the") do not outweigh the words themselves.
		gram := 1 / float32(utf8.RuneCount(w))
		padded = append(append(append(padded[:0], ' '), w...), ' ')
		var starts [4]int // byte offsets of the last code points
		n := 0
		for i := range string(padded) {
			starts[n%4] = i
			n++
			if n >= 4 {
				g := padded[starts[(n-4)%4]:i]
				add(fnv1aBytes(fnv1a(fnvOffset, "g:"), g), gram)
			}
		}
		if n >= 3 {
			g := padded[starts[(n-3)%4]:]
			add(fnv1aBytes(fnv1a(fnvOffset, "g:"), g), gram)
		}
	})
	Normalize(v)
	return v
}

// FNV-1a, 64 bits, as hash/fnv computes it, without allocating.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnv1a(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

func fnv1aBytes(h uint64, s []byte) uint64 {
	for _, c := range s {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
}

// Normalize scales v to unit length in place; a zero vector stays zero.
func Normalize(v []float32) {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= inv
	}
}

// Cosine returns the cosine similarity of a and b (0 when either is zero
// or their lengths differ).
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// Cache holds embeddings by model and chunk hash, so an unchanged chunk is
// never embedded twice. It is safe for concurrent use. The zero value is
// ready to use.
type Cache struct {
	mu      sync.Mutex
	vectors map[cacheKey][]float32
	dirty   bool
	// fresh is the keys stored since the last TakeFresh or ClearDirty,
	// in order: what an append-only cache file still lacks.
	fresh []cacheKey
}

type cacheKey struct{ model, hash string }

// Lookup returns the cached vector of the chunk hash under model.
func (c *Cache) Lookup(model, hash string) ([]float32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.vectors[cacheKey{model, hash}]
	return v, ok
}

// Store remembers the vector of the chunk hash under model.
func (c *Cache) Store(model, hash string, v []float32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.vectors == nil {
		c.vectors = map[cacheKey][]float32{}
	}
	k := cacheKey{model, hash}
	c.vectors[k] = v
	c.fresh = append(c.fresh, k)
	c.dirty = true
}

// Delete forgets the vector of the chunk hash under model, reporting
// whether there was one.
func (c *Cache) Delete(model, hash string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := cacheKey{model, hash}
	_, ok := c.vectors[k]
	delete(c.vectors, k)
	return ok
}

// TakeFresh encodes, as MarshalBinary does but without its header, the
// entries stored since the last TakeFresh or ClearDirty and still held,
// and marks the cache as saved: what an append-only cache file appends.
func (c *Cache) TakeFresh() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	var buf []byte
	for _, k := range c.fresh {
		if v, ok := c.vectors[k]; ok {
			buf = appendEntry(buf, k, v)
		}
	}
	c.fresh, c.dirty = nil, false
	return buf
}

// EntrySize is the bytes MarshalBinary takes for one entry of a vector of
// dims dimensions.
func EntrySize(model, hash string, dims int) int64 {
	return int64(4 + len(model) + 4 + len(hash) + 4 + 4*dims)
}

// Len returns the number of cached vectors.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.vectors)
}

// EmbedBatchSize is how many texts EmbedCached sends to an embedder at once.
const EmbedBatchSize = 64

// EmbedCached returns a vector for each text, whose hash is in hashes: from
// the cache when it has one, otherwise from e (in batches) and then cached.
// cache may be nil. On an embedder error the vectors found so far are
// returned (nil where missing) with the error.
func EmbedCached(ctx context.Context, e Embedder, cache *Cache, texts, hashes []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	if !Enabled(e) {
		return out, nil
	}
	var missing []int
	for i := range texts {
		if cache != nil {
			if v, ok := cache.Lookup(e.Model(), hashes[i]); ok && len(v) == e.Dimensions() {
				out[i] = v
				continue
			}
		}
		missing = append(missing, i)
	}
	for start := 0; start < len(missing); start += EmbedBatchSize {
		batch := missing[start:min(start+EmbedBatchSize, len(missing))]
		in := make([]string, len(batch))
		for j, i := range batch {
			in[j] = texts[i]
		}
		vs, err := e.Embed(ctx, in)
		if err == nil && len(vs) != len(in) {
			err = fmt.Errorf("embedder %s returned %d vectors for %d texts", e.Model(), len(vs), len(in))
		}
		if err != nil {
			return out, fmt.Errorf("embed: %w", err)
		}
		for j, i := range batch {
			if len(vs[j]) != e.Dimensions() {
				return out, fmt.Errorf("embed: %w: embedder %s returned %d dimensions, configured %d", ErrDimensions, e.Model(), len(vs[j]), e.Dimensions())
			}
			out[i] = vs[j]
			if cache != nil {
				cache.Store(e.Model(), hashes[i], vs[j])
			}
		}
	}
	return out, nil
}

// ErrDimensions reports a vector whose length is not the configured one.
var ErrDimensions = errors.New("wrong vector dimensions")

// MarshalBinary encodes the cache: for each entry the model, the hash and
// the vector, little-endian.
func (c *Cache) MarshalBinary() ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var buf []byte
	buf = append(buf, cacheMagic...)
	for k, v := range c.vectors {
		buf = appendEntry(buf, k, v)
	}
	return buf, nil
}

func appendEntry(buf []byte, k cacheKey, v []float32) []byte {
	buf = appendString(buf, k.model)
	buf = appendString(buf, k.hash)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(v)))
	for _, x := range v {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(x))
	}
	return buf
}

// UnmarshalBinary adds the entries encoded by MarshalBinary to the cache;
// a damaged encoding adds nothing.
func (c *Cache) UnmarshalBinary(data []byte) error {
	entries, _, err := decodeEntries(data)
	if err != nil {
		return err
	}
	c.add(entries)
	return nil
}

// UnmarshalPrefix adds the entries of data, an encoding MarshalBinary
// began and TakeFresh appended to, up to the first damaged one (an
// append cut short), and returns how many bytes of data those take with
// the header; err says what was damaged. The last entry of a key wins.
func (c *Cache) UnmarshalPrefix(data []byte) (valid int, err error) {
	entries, valid, err := decodeEntries(data)
	c.add(entries)
	return valid, err
}

func (c *Cache) add(entries map[cacheKey][]float32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.vectors == nil {
		c.vectors = make(map[cacheKey][]float32, len(entries))
	}
	for k, v := range entries {
		c.vectors[k] = v
	}
}

// decodeEntries decodes an encoding up to its end or its first damaged
// entry, returning the entries and the bytes they take with the header.
func decodeEntries(all []byte) (map[cacheKey][]float32, int, error) {
	if !strings.HasPrefix(string(all), cacheMagic) {
		return nil, 0, errors.New("decode embedding cache: not a cache file")
	}
	data := all[len(cacheMagic):]
	entries := map[cacheKey][]float32{}
	for len(data) > 0 {
		valid := len(all) - len(data)
		var k cacheKey
		var ok bool
		if k.model, data, ok = readString(data); !ok {
			return entries, valid, errors.New("decode embedding cache: truncated model")
		}
		if k.hash, data, ok = readString(data); !ok {
			return entries, valid, errors.New("decode embedding cache: truncated hash")
		}
		if len(data) < 4 {
			return entries, valid, errors.New("decode embedding cache: truncated vector")
		}
		n := int(binary.LittleEndian.Uint32(data))
		data = data[4:]
		if n > len(data)/4 {
			return entries, valid, errors.New("decode embedding cache: truncated vector")
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		data = data[4*n:]
		entries[k] = v
	}
	return entries, len(all), nil
}

// Dirty reports whether entries were stored since the last ClearDirty.
func (c *Cache) Dirty() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dirty
}

// ClearDirty marks the cache as saved.
func (c *Cache) ClearDirty() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dirty, c.fresh = false, nil
}

const cacheMagic = "quire-embeddings-v1\n"

func appendString(buf []byte, s string) []byte {
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(s)))
	return append(buf, s...)
}

func readString(data []byte) (string, []byte, bool) {
	if len(data) < 4 {
		return "", nil, false
	}
	n := int(binary.LittleEndian.Uint32(data))
	data = data[4:]
	if n > len(data) {
		return "", nil, false
	}
	return string(data[:n]), data[n:], true
}
