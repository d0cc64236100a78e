package o200k

// Slots of the vocabulary's hash table: the token's rank+1 in the low
// rankBits bits (0: an empty slot), and tagBits more bits of its hash
// above them, so a probe that meets another token rarely reads that
// token's text.
const (
	rankBits  = 18 // 199,998 tokens
	tagBits   = 32 - rankBits
	tableBits = 19
	rankMask  = 1<<rankBits - 1
)

// vocabHash hashes a token's text for the vocabulary's table a word at a
// time: its length, its first and last eight bytes (all of it up to 16
// bytes) and every eight bytes between. gen.go computes the same.
func vocabHash(s string) uint64 {
	if len(s) <= 8 {
		return mixHash(load(s), len(s))
	}
	return longHash(s)
}

// mixHash is vocabHash of a text of n bytes whose bytes, or first eight
// of them and what longHash makes of the rest, are w.
func mixHash(w uint64, n int) uint64 {
	return (w ^ uint64(n)<<56 ^ uint64(n)) * 0x9e3779b97f4a7c15
}

// longHash is vocabHash of s, longer than eight bytes.
func longHash(s string) uint64 {
	n := len(s)
	h := load8(s, 0) ^ load8(s, n-8)*0xff51afd7ed558ccd
	for i := 8; i < n-8; i += 8 {
		h = (h ^ load8(s, i)) * 0xc4ceb9fe1a85ec53
	}
	return mixHash(h, n)
}

// slotOf and tagOf are where a token whose hash is h goes in the table,
// and the bits of h its slot keeps.
func slotOf(h uint64) uint32 { return uint32(h >> (64 - tableBits)) }
func tagOf(h uint64) uint32  { return uint32(h>>(64-tableBits-tagBits)) & (1<<tagBits - 1) }

// load8 returns the eight bytes of s at i as a little-endian number.
func load8(s string, i int) uint64 {
	b := s[i : i+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// load returns s, at most eight bytes, as a little-endian number: from
// two overlapping loads, whose common bytes land in the same places.
func load(s string) uint64 {
	n := len(s)
	switch {
	case n >= 4:
		lo := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24
		t := s[n-4:]
		hi := uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24
		return lo | hi<<(8*(n-4))
	case n > 0:
		return uint64(s[0]) | uint64(s[n/2])<<(8*(n/2)) | uint64(s[n-1])<<(8*(n-1))
	}
	return 0
}
