package prompt

import "testing"

// A range ends before its End position: one that ends at the start of a
// line does not cover that line.
func TestRangeLines(t *testing.T) {
	for _, tc := range []struct {
		name        string
		r           Range
		first, last int
	}{
		{"a 10-line file with a final newline", Range{Position{0, 1, 1}, Position{487, 11, 1}}, 1, 10},
		{"a file without a final newline", Range{Position{0, 1, 1}, Position{480, 10, 31}}, 1, 10},
		{"a cut from line start to line start", Range{Position{14055, 164, 1}, Position{21455, 283, 1}}, 164, 282},
		{"a cut inside one line", Range{Position{5, 1, 6}, Position{9, 1, 10}}, 1, 1},
		{"an empty range at a line start", Range{Position{5, 2, 1}, Position{5, 2, 1}}, 2, 2},
		{"a cut ending mid-line", Range{Position{5, 1, 6}, Position{2896, 43, 7}}, 1, 43},
		{"an unknown end column", Range{Position{5, 1, 6}, Position{90000, 900, 0}}, 1, 900},
	} {
		if first, last := tc.r.Lines(); first != tc.first || last != tc.last {
			t.Errorf("%s: lines %d–%d, want %d–%d", tc.name, first, last, tc.first, tc.last)
		}
	}
}
