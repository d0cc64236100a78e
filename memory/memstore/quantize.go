package memstore

import "math"

// quantize sets code to v's int8 code and scale to its scale: code[d] ×
// scale is v[d] to within scale/2, the largest component mapping to ±127.
func quantize(code []int8, scale *float32, v []float32) {
	var top float32
	for _, f := range v {
		top = max(top, f, -f)
	}
	if top == 0 {
		clear(code)
		*scale = 0
		return
	}
	*scale = top / 127
	inv := 127 / top
	for d, f := range v {
		code[d] = int8(max(-127, min(127, math.Round(float64(f*inv)))))
	}
}

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

// queryCode returns v's code widened to int32, and its scale.
func queryCode(v []float32) ([]int32, float32) {
	code := make([]int8, len(v))
	var scale float32
	quantize(code, &scale, v)
	wide := make([]int32, len(v))
	for d, c := range code {
		wide[d] = int32(c)
	}
	return wide, scale
}
