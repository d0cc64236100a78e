package memstore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/storetest"
)

// A store with an embedding cache maps its approximate index's vectors
// from a file beside the cache, not from the temporary directory (which
// may be memory, tmpfs).
func TestArenaBesideCache(t *testing.T) {
	dir := t.TempDir()
	s, err := New(Options{Embedder: memory.Builtin{}, ExactVectors: 100, CacheFile: filepath.Join(dir, "embeddings.bin")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Index(context.Background(), "a", "c1", storetest.NewCorpus(300, 3).Docs); err != nil {
		t.Fatal(err)
	}
	if ix := s.agents["a"]; ix.ann == nil || ix.ann.arena.file == nil {
		t.Fatal("no mapped approximate index above the exact-scan threshold")
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	var open []string
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && strings.Contains(target, "quire-vectors-") {
			open = append(open, target)
		}
	}
	if len(open) != 1 || !strings.HasPrefix(open[0], dir+string(filepath.Separator)) {
		t.Errorf("open vector files %q, want one in %s", open, dir)
	}
}
