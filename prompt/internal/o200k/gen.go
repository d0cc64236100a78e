//go:build ignore

// gen writes vocab.bin: o200k_base's tokens by rank, taken from
// github.com/tiktoken-go/tokenizer, with a hash table over them, laid out
// so the package can use the embedded bytes as they are.
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
		i := hash(t) & (tableSize - 1)
		for slots[i] != 0 {
			i = (i + 1) & (tableSize - 1)
		}
		slots[i] = uint32(rank) + 1
	}
	for _, s := range slots {
		out = binary.LittleEndian.AppendUint32(out, s)
	}
	if err := os.WriteFile("vocab.bin", out, 0o644); err != nil {
		log.Fatal(err)
	}
	log.Printf("%d tokens, %d bytes of text, %d bytes in all", n, off, len(out))
}

const tableSize = 1 << 19

// hash is FNV-1a, 64 bits: the package computes the same.
func hash(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}
