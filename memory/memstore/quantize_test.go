package memstore

import (
	"math/rand/v2"
	"testing"
)

// A code is within half its scale of the vector in every component, and
// a query's code scores a code as the plain sum of products does, sparse
// or dense.
func TestQuantize(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name   string
		dims   int
		share  float64 // of non-zero components in the query
		sparse bool
	}{
		{"dense", 384, 1, false},
		{"half", 384, 0.6, false},
		{"sparse", 384, 0.1, true},
		{"odd length", 37, 0.2, true},
		{"zero", 16, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, qv := make([]float32, tc.dims), make([]float32, tc.dims)
			for d := range v {
				v[d] = float32(r.NormFloat64())
				if r.Float64() < tc.share {
					qv[d] = float32(r.NormFloat64())
				}
			}
			code := make([]int8, tc.dims)
			var scale float32
			quantize(code, &scale, v)
			for d := range v {
				if diff := float32(code[d])*scale - v[d]; diff > scale/2*1.001 || -diff > scale/2*1.001 {
					t.Fatalf("component %d: %d × %g is %g off %g", d, code[d], scale, diff, v[d])
				}
			}
			q := newQueryCode(qv)
			if sparse := q.at != nil || tc.share == 0; sparse != tc.sparse {
				t.Errorf("sparse: %v, want %v", sparse, tc.sparse)
			}
			var want int32
			for d := range code {
				want += int32(code[d]) * q.wide[d]
			}
			if got := q.dot(code); got != want {
				t.Errorf("dot %d, want %d", got, want)
			}
		})
	}
}
