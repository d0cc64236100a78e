package memstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/quirehq/quire/internal/replace"
	"github.com/quirehq/quire/memory"
)

// cacheFile is the embedding cache on disk: a log of entries that a save
// appends to (each vector is written once, however many agents are
// indexed), rewritten whole only when entries dropped from the cache (a
// chunk version no agent holds any more) take more than half of it, or
// when an append failed or the file was found damaged.
type cacheFile struct {
	path string
	// size is the bytes of the file; garbage the bytes of its entries the
	// cache no longer holds.
	size, garbage int64
	// rewrite makes the next save write the whole file.
	rewrite bool
}

// minCompactBytes is the file size below which dropped entries are left
// in the file: rewriting a small file saves nothing worth a write.
const minCompactBytes = 1 << 20

// load adds the file's entries to cache. A damaged tail (an append cut
// short) is dropped with a warning, and the file is rewritten on the next
// save; a missing file is an empty cache.
func (f *cacheFile) load(cache *memory.Cache, warn func(msg string, args ...any)) error {
	data, err := os.ReadFile(f.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("read embedding cache %s: %w", f.path, err)
	}
	f.size = int64(len(data))
	valid, err := cache.UnmarshalPrefix(data)
	if err != nil {
		warn("embedding cache damaged, keeping what was readable", "file", f.path, "kept_bytes", valid, "err", err)
		f.rewrite = true
	}
	cache.ClearDirty()
	return nil
}

// dropped records that the cache no longer holds an entry of n bytes.
func (f *cacheFile) dropped(n int64) { f.garbage += n }

// save appends the entries stored in cache since the last save, or
// rewrites the file with the cache's entries when it is mostly garbage.
func (f *cacheFile) save(cache *memory.Cache) error {
	if f.rewrite || (f.size >= minCompactBytes && 2*f.garbage > f.size) {
		return f.saveWhole(cache)
	}
	fresh := cache.TakeFresh()
	if len(fresh) == 0 {
		return nil
	}
	if err := f.append(fresh); err != nil {
		f.rewrite = true // the file may end in part of fresh: rewrite it
		return err
	}
	return nil
}

func (f *cacheFile) append(fresh []byte) error {
	if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
		return fmt.Errorf("save embedding cache: %w", err)
	}
	out, err := os.OpenFile(f.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("save embedding cache: %w", err)
	}
	if f.size == 0 {
		fresh = append([]byte(cacheMagic()), fresh...)
	}
	n, werr := out.Write(fresh)
	f.size += int64(n)
	if err := errors.Join(werr, out.Close()); err != nil {
		return fmt.Errorf("save embedding cache %s: %w", f.path, err)
	}
	return nil
}

// saveWhole writes the cache's entries to a new file that replaces the
// old one.
func (f *cacheFile) saveWhole(cache *memory.Cache) error {
	cache.TakeFresh() // in the whole encoding
	data, err := cache.MarshalBinary()
	if err != nil {
		return fmt.Errorf("encode embedding cache: %w", err)
	}
	dir := filepath.Dir(f.path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save embedding cache: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".embeddings-*")
	if err != nil {
		return fmt.Errorf("save embedding cache: %w", err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		f.rewrite = true
		return fmt.Errorf("save embedding cache: %w", err)
	}
	if err := replace.File(tmp.Name(), f.path); err != nil {
		os.Remove(tmp.Name())
		f.rewrite = true
		return fmt.Errorf("save embedding cache: %w", err)
	}
	f.size, f.garbage, f.rewrite = int64(len(data)), 0, false
	return nil
}

// cacheMagic is the header MarshalBinary writes.
func cacheMagic() string {
	var empty memory.Cache
	data, _ := empty.MarshalBinary()
	return string(data)
}
