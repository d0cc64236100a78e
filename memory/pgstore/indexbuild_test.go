package pgstore

import "testing"

// TestHNSWBuildMemory: the build gets the whole graph's memory (halfvec
// and neighbour lists, with a quarter more), never less than 1 GiB nor
// more than 8 GiB. It needs no database.
func TestHNSWBuildMemory(t *testing.T) {
	const gib = 1 << 30
	for _, tc := range []struct {
		n    int64
		dims int
		want int64
	}{
		{0, 384, gib},                   // an empty table: the floor
		{10_000, 384, gib},              // small: the floor
		{1_000_000, 384, 2_240_000_000}, // 1M builtin vectors: 768 + 1,024 bytes each, a quarter more
		{500_000, 1536, 2_560_000_000},  // half a million vectors of a large model
		{10_000_000, 1536, 8 * gib},     // past the ceiling
	} {
		got := hnswBuildMemory(tc.n, tc.dims)
		if got != tc.want {
			t.Errorf("hnswBuildMemory(%d, %d) = %d, want %d", tc.n, tc.dims, got, tc.want)
		}
		if got < gib || got > 8*gib {
			t.Errorf("hnswBuildMemory(%d, %d) = %d, outside 1-8 GiB", tc.n, tc.dims, got)
		}
	}
}
