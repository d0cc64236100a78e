package gitsync

import (
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// The tree cache holds at most treeCacheEntries tree entries, however
// many versions of a large tree are put in it.
func TestTreeCacheBoundedBySize(t *testing.T) {
	var c treeCache
	big := &treeDir{entries: make([]object.TreeEntry, 1000)}
	for i := range 1000 {
		var h plumbing.Hash
		h[0], h[1] = byte(i), byte(i>>8)
		c.put(h, big)
		if c.entries > treeCacheEntries {
			t.Fatalf("after %d trees the cache holds %d entries, more than %d", i+1, c.entries, treeCacheEntries)
		}
		if _, ok := c.get(h); !ok {
			t.Fatalf("tree %d not found right after it was put", i)
		}
	}
}
