package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quirehq/quire/prompt"
)

// The token-count file survives a process, ignores lines it cannot read,
// and stays bounded.
func TestTokenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "quire", "tokens-o200k_base")
	a := &tokenFile{path: path}
	sum := prompt.ContentSum(prompt.DefaultEncoding, "hello")
	if _, ok := a.TokenCount(sum); ok {
		t.Fatal("an empty store has a count")
	}
	a.RememberTokenCount(sum, 7)
	if err := a.save(); err != nil {
		t.Fatal(err)
	}
	// Damage: a short line, a bad hex sum, a negative count.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("abc 3\n" + strings.Repeat("zz", 32) + " 4\n" + strings.Repeat("00", 32) + " -1\n")
	f.Close()
	b := &tokenFile{path: path}
	if n, ok := b.TokenCount(sum); !ok || n != 7 {
		t.Errorf("after reopening: %d %v, want 7", n, ok)
	}
	if len(b.counts) != 1 {
		t.Errorf("malformed lines were read: %v", b.counts)
	}
	for i := range maxStoredCounts + 10 {
		b.RememberTokenCount(prompt.ContentSum(prompt.DefaultEncoding, strings.Repeat("x", i)), i)
	}
	if err := b.save(); err != nil {
		t.Fatal(err)
	}
	c := &tokenFile{path: path}
	c.TokenCount(sum)
	if len(c.counts) != maxStoredCounts {
		t.Errorf("file holds %d counts, want the newest %d", len(c.counts), maxStoredCounts)
	}
	if _, ok := c.counts[sum]; ok {
		t.Errorf("the oldest count was kept")
	}
}
