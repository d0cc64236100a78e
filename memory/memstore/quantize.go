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

// dot8 returns the dot product of two codes of equal length (at most
// 133,000 dimensions: 127² × dims fits an int32).
func dot8(a, b []int8) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		s0 += int32(a[i])*int32(b[i]) + int32(a[i+4])*int32(b[i+4])
		s1 += int32(a[i+1])*int32(b[i+1]) + int32(a[i+5])*int32(b[i+5])
		s2 += int32(a[i+2])*int32(b[i+2]) + int32(a[i+6])*int32(b[i+6])
		s3 += int32(a[i+3])*int32(b[i+3]) + int32(a[i+7])*int32(b[i+7])
	}
	for ; i < len(a); i++ {
		s0 += int32(a[i]) * int32(b[i])
	}
	return s0 + s1 + s2 + s3
}
