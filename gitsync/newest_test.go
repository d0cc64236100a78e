package gitsync

import "testing"

// TestNewest: a key holds its newest value only, sizes count against the
// limit, a value past half of it is not kept, and past the limit it
// starts again empty (and says so).
func TestNewest(t *testing.T) {
	const limit = 100
	var c newest[string, int]
	steps := []struct {
		key           string
		v, n          int
		old           int
		replaced, emp bool
		size          int
	}{
		{"a", 1, 30, 0, false, false, 30},
		{"a", 2, 40, 1, true, false, 40},  // replaced: its size counts once
		{"b", 3, 50, 0, false, false, 90}, // up to the limit
		{"c", 4, 51, 0, false, false, 90}, // past half the limit: not kept
		{"b", 5, 20, 3, true, false, 60},
		{"d", 6, 45, 0, false, true, 45}, // 105 > 100: starts again
	}
	for i, s := range steps {
		old, replaced, emptied := c.put(s.key, s.v, s.n, limit)
		if old != s.old || replaced != s.replaced || emptied != s.emp || c.size != s.size {
			t.Fatalf("step %d: put(%s, %d): old %d replaced %v emptied %v size %d, want %d %v %v %d",
				i, s.key, s.v, old, replaced, emptied, c.size, s.old, s.replaced, s.emp, s.size)
		}
	}
	if _, ok := c.get("c"); ok {
		t.Error("a value past half the limit is kept")
	}
	if _, ok := c.get("a"); ok {
		t.Error("a value from before the cache started again is kept")
	}
	if v, ok := c.get("d"); !ok || v != 6 {
		t.Errorf("d: %d %v, want 6", v, ok)
	}
}
