package memstore

import "math"

// quantize sets code to v's int8 code and scale to its scale: code[d] ×
// scale is v[d] to within scale/2, the largest component mapping to ±127.
func quantize(code []int8, scale *float32, v []float32) {
	var top float32
	for _, f := range v {
		if a := math.Float32frombits(math.Float32bits(f) &^ signBit); a > top {
			top = a
		}
	}
	if top == 0 {
		clear(code)
		*scale = 0
		return
	}
	*scale = top / 127
	inv := 127 / top
	code = code[:len(v)]
	for d, f := range v {
		// Rounded half away from zero, without a branch: |f × inv| ≤ 127
		// (to within float32 rounding, which the conversion truncates).
		x := f * inv
		half := math.Float32frombits(math.Float32bits(x)&signBit | half32)
		code[d] = int8(x + half)
	}
}

// signBit is a float32's sign, half32 the bits of 0.5.
const (
	signBit = 1 << 31
	half32  = 0x3f000000
)

// dot8 returns the dot product of a code and a query's code widened to
// int32 (which Go multiplies faster than two int8 slices), of equal
// length: at most 133,000 dimensions, for 127² × dims to fit an int32.
func dot8(a []int8, b []int32) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += int32(a[i]) * b[i]
		s1 += int32(a[i+1]) * b[i+1]
		s2 += int32(a[i+2]) * b[i+2]
		s3 += int32(a[i+3]) * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += int32(a[i]) * b[i]
	}
	return s0 + s1 + s2 + s3
}

// A queryCode is a query vector's code, widened to int32, and its scale.
// A sparse code (at most half its components non-zero: the builtin
// embedder's vector of a short query holds a few dozen hashed words and
// trigrams of 384) is scored by its non-zero components alone.
type queryCode struct {
	wide  []int32
	scale float32
	at    []int32 // the non-zero components, when sparse
	val   []int32 // wide[at[j]]
}

// newQueryCode returns v's code.
func newQueryCode(v []float32) queryCode {
	code := make([]int8, len(v))
	q := queryCode{wide: make([]int32, len(v))}
	quantize(code, &q.scale, v)
	for d, c := range code {
		q.wide[d] = int32(c)
		if c != 0 {
			q.at, q.val = append(q.at, int32(d)), append(q.val, int32(c))
		}
	}
	if 2*len(q.at) > len(v) {
		q.at, q.val = nil, nil
	}
	return q
}

// dot returns the dot product of code c with q's code.
func (q *queryCode) dot(c []int8) int32 {
	if q.at == nil {
		return dot8(c, q.wide)
	}
	c = c[:len(q.wide)]
	var s0, s1 int32
	j := 0
	for ; j+2 <= len(q.at); j += 2 {
		s0 += int32(c[q.at[j]]) * q.val[j]
		s1 += int32(c[q.at[j+1]]) * q.val[j+1]
	}
	if j < len(q.at) {
		s0 += int32(c[q.at[j]]) * q.val[j]
	}
	return s0 + s1
}
