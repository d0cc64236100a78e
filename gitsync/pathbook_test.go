package gitsync

import (
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestPathBookBounded: a pathBook that paths no roll-up takes fill is
// emptied, and goes on remembering the paths written since.
func TestPathBookBounded(t *testing.T) {
	var b pathBook
	name := func(i int) plumbing.Hash {
		var h plumbing.Hash
		h[0], h[1], h[2] = byte(i), byte(i>>8), byte(i>>16)
		return h
	}
	for i := range pathBookMax + 10 {
		b.add(map[plumbing.Hash]string{name(i): "memory/a.md"})
		if b.len() > pathBookMax {
			t.Fatalf("%d paths after %d added, want at most %d", b.len(), i+1, pathBookMax)
		}
	}
	last := name(pathBookMax + 9)
	if p, ok := b.take(last); !ok || p != "memory/a.md" {
		t.Errorf("the last path added: %q %v", p, ok)
	}
	if _, ok := b.take(last); ok {
		t.Error("a path taken twice")
	}
	if _, ok := b.take(name(0)); ok {
		t.Error("the first path kept past the bound")
	}
}
