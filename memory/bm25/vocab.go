package bm25

import (
	"bytes"
	"hash/maphash"
)

// vocab is a Dynamic's terms, numbered from 0 as they come: each term's
// bytes back to back in one arena, found through an open-addressing
// table of ids. Memory holds many rare terms (names, numbers, days), so
// a term's fixed cost decides what the index takes: a map from strings
// cost about 45 bytes a term (its slot and the key's own allocation);
// this costs 8 to 15 and the term's bytes.
//
// Only the Dynamic's Update adds terms; any number of goroutines may
// look terms up when none is adding.
type vocab struct {
	seed  maphash.Seed
	bytes []byte   // the terms, back to back
	ends  []uint32 // by id: where the term ends in bytes (it starts where the previous one ends)
	table []int32  // id+1 at the place its hash picks (or the next free one); 0 is free
}

// minTable is the smallest table; it doubles when three quarters full.
const minTable = 16

func newVocab() vocab { return vocab{seed: maphash.MakeSeed()} }

// len returns the number of terms.
func (v *vocab) len() int { return len(v.ends) }

// term returns the bytes of the term id.
func (v *vocab) term(id int32) []byte {
	start := uint32(0)
	if id > 0 {
		start = v.ends[id-1]
	}
	return v.bytes[start:v.ends[id]]
}

// find returns term's id and whether v holds it.
func (v *vocab) find(term []byte) (int32, bool) {
	if len(v.table) == 0 {
		return 0, false
	}
	mask := uint64(len(v.table) - 1)
	for i := maphash.Bytes(v.seed, term) & mask; ; i = (i + 1) & mask {
		s := v.table[i]
		if s == 0 {
			return 0, false
		}
		if bytes.Equal(v.term(s-1), term) {
			return s - 1, true
		}
	}
}

// findString is find for a string.
func (v *vocab) findString(term string) (int32, bool) {
	if len(v.table) == 0 {
		return 0, false
	}
	mask := uint64(len(v.table) - 1)
	for i := maphash.String(v.seed, term) & mask; ; i = (i + 1) & mask {
		s := v.table[i]
		if s == 0 {
			return 0, false
		}
		if string(v.term(s-1)) == term {
			return s - 1, true
		}
	}
}

// addString adds term, which v does not hold, and returns its id.
func (v *vocab) addString(term string) int32 {
	v.bytes = append(v.bytes, term...)
	return v.insert(maphash.String(v.seed, term))
}

// addBytes is addString for bytes.
func (v *vocab) addBytes(term []byte) int32 {
	v.bytes = append(v.bytes, term...)
	return v.insert(maphash.Bytes(v.seed, term))
}

// insert numbers the term just appended to bytes, whose hash is h.
func (v *vocab) insert(h uint64) int32 {
	id := int32(len(v.ends))
	v.ends = append(v.ends, uint32(len(v.bytes)))
	if 4*len(v.ends) > 3*len(v.table) {
		v.grow()
		return id
	}
	v.place(h, id)
	return id
}

// place puts id in the table at the first free place from h's.
func (v *vocab) place(h uint64, id int32) {
	mask := uint64(len(v.table) - 1)
	i := h & mask
	for v.table[i] != 0 {
		i = (i + 1) & mask
	}
	v.table[i] = id + 1
}

// grow doubles the table and places every term again.
func (v *vocab) grow() {
	v.table = make([]int32, max(minTable, 2*len(v.table)))
	for id := range int32(len(v.ends)) {
		v.place(maphash.Bytes(v.seed, v.term(id)), id)
	}
}
