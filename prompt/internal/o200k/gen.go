//go:build ignore

// gen writes vocab.bin: o200k_base's tokens by rank, taken from
// github.com/tiktoken-go/tokenizer, with a hash table over them and one
// over the tokens of two bytes, laid out so the package can use the
// embedded bytes as they are.
//
//	go run gen.go
package main

import (
	"encoding/binary"
	"log"
	"os"

	"github.com/tiktoken-go/tokenizer/codec"
)

func main() {
	c := codec.NewO200kBase()
	var tokens [][]byte
	for id := 0; ; id++ {
		s, err := c.Decode([]uint{uint(id)})
		if err != nil {
			if id < 199990 {
				log.Fatalf("token %d: %v", id, err)
			}
			break // the ordinary vocabulary ends; special tokens follow
		}
		tokens = append(tokens, []byte(s))
	}
	n := len(tokens)
	if n >= 1<<rankBits {
		log.Fatalf("%d tokens: a slot has room for %d", n, 1<<rankBits-1)
	}
	var out []byte
	out = binary.LittleEndian.AppendUint32(out, uint32(n))
	off := uint32(0)
	for _, t := range tokens {
		out = binary.LittleEndian.AppendUint32(out, off)
		off += uint32(len(t))
	}
	out = binary.LittleEndian.AppendUint32(out, off)
	for _, t := range tokens {
		out = append(out, t...)
	}
	slots := make([]uint32, tableSize)
	for rank, t := range tokens {
		h := hash(t)
		i := h >> (64 - tableBits)
		for slots[i] != 0 {
			i = (i + 1) & (tableSize - 1)
		}
		tag := uint32(h>>(64-tableBits-tagBits)) & (1<<tagBits - 1)
		slots[i] = tag<<rankBits | (uint32(rank) + 1)
	}
	for _, s := range slots {
		out = binary.LittleEndian.AppendUint32(out, s)
	}
	pairs := make([]uint64, pairSize)
	for rank, t := range tokens {
		if len(t) != 2 {
			continue
		}
		key := uint64(t[0]) | uint64(t[1])<<8
		i := pairSlot(key)
		for pairs[i] != 0 {
			i = (i + 1) & (pairSize - 1)
		}
		pairs[i] = key | uint64(rank+1)<<16
	}
	for _, p := range pairs {
		out = binary.LittleEndian.AppendUint64(out, p)
	}
	if err := os.WriteFile("vocab.bin", out, 0o644); err != nil {
		log.Fatal(err)
	}
	log.Printf("%d tokens, %d bytes of text, %d bytes in all", n, off, len(out))
}

const (
	rankBits  = 18
	tagBits   = 32 - rankBits
	tableBits = 19
	tableSize = 1 << tableBits
	pairBits  = 13
	pairSize  = 1 << pairBits
)

// pairSlot is the package's.
func pairSlot(key uint64) uint64 { return key * 0x9e3779b97f4a7c15 >> (64 - pairBits) }

// hash is the package's vocabHash.
func hash(b []byte) uint64 {
	s := string(b)
	n := len(s)
	var h uint64
	if n <= 8 {
		h = load(s)
	} else {
		h = load8(s, 0) ^ load8(s, n-8)*0xff51afd7ed558ccd
		for i := 8; i < n-8; i += 8 {
			h = (h ^ load8(s, i)) * 0xc4ceb9fe1a85ec53
		}
	}
	return (h ^ uint64(n)<<56 ^ uint64(n)) * 0x9e3779b97f4a7c15
}

func load8(s string, i int) uint64 { return binary.LittleEndian.Uint64([]byte(s[i : i+8])) }

func load(s string) uint64 {
	var w uint64
	for k := len(s) - 1; k >= 0; k-- {
		w = w<<8 | uint64(s[k])
	}
	return w
}
