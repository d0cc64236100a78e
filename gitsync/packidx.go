package gitsync

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// packIndex is a pack's index (.idx, version 2) as read from disk: the
// objects of the pack, sorted, with their offsets in it, and the
// checksum of the pack it indexes.
type packIndex struct {
	hashes  []plumbing.Hash
	offsets []int64
	pack    plumbing.Hash
}

// errIdxFormat is an index that is not a version 2 pack index.
var errIdxFormat = errors.New("not a version 2 pack index")

// readPackIndex reads and checks the index at path: its layout, and its
// own checksum (the last 20 bytes, over everything before them).
func readPackIndex(path string) (*packIndex, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parsePackIndex(b)
}

// idxHeader is a version 2 pack index's header: magic, version and the
// fan-out table of 256 counts.
const idxHeader = 8 + 256*4

// checkPackIndex checks b's layout and its own checksum (the last 20
// bytes, over everything before them) and returns its object count.
func checkPackIndex(b []byte) (int, error) {
	if len(b) < idxHeader+2*20 || !bytes.Equal(b[:4], []byte("\xfftOc")) || binary.BigEndian.Uint32(b[4:8]) != 2 {
		return 0, errIdxFormat
	}
	if sum := sha1.Sum(b[:len(b)-20]); !bytes.Equal(sum[:], b[len(b)-20:]) {
		return 0, fmt.Errorf("its checksum does not match its content (%d bytes)", len(b))
	}
	n := int(binary.BigEndian.Uint32(b[idxHeader-4 : idxHeader]))
	// Names, CRCs, 4-byte offsets, then the 8-byte offsets those point
	// to, then the two checksums.
	if n < 0 || idxHeader+n*(20+4+4)+2*20 > len(b) {
		return 0, fmt.Errorf("%w: %d objects do not fit in %d bytes", errIdxFormat, n, len(b))
	}
	return n, nil
}

func parsePackIndex(b []byte) (*packIndex, error) {
	n, err := checkPackIndex(b)
	if err != nil {
		return nil, err
	}
	const header = idxHeader
	large := b[header+n*(20+4+4) : len(b)-40]
	x := &packIndex{hashes: make([]plumbing.Hash, n), offsets: make([]int64, n)}
	for i := range n {
		copy(x.hashes[i][:], b[header+i*20:])
		off := binary.BigEndian.Uint32(b[header+n*24+i*4:])
		if off&0x80000000 == 0 {
			x.offsets[i] = int64(off)
			continue
		}
		j := int(off&0x7fffffff) * 8
		if j+8 > len(large) {
			return nil, fmt.Errorf("%w: a large offset lies outside the file", errIdxFormat)
		}
		x.offsets[i] = int64(binary.BigEndian.Uint64(large[j:]))
	}
	copy(x.pack[:], b[len(b)-40:])
	return x, nil
}

// contains reports whether the pack holds h.
func (x *packIndex) contains(h plumbing.Hash) bool {
	_, ok := slices.BinarySearchFunc(x.hashes, h, func(a, b plumbing.Hash) int { return bytes.Compare(a[:], b[:]) })
	return ok
}

// listPacks lists the packs in dir that have their index, by base name
// ("pack-<sum>"): a pack without its index is being installed (or was
// left by a crash before its index); neither git nor go-git reads it.
func listPacks(dir string) ([]string, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	idx := map[string]bool{}
	for _, de := range des {
		if base, ok := strings.CutSuffix(de.Name(), ".idx"); ok {
			idx[base] = true
		}
	}
	var out []string
	for _, de := range des {
		if base, ok := strings.CutSuffix(de.Name(), ".pack"); ok && strings.HasPrefix(base, "pack-") && idx[base] {
			out = append(out, base)
		}
	}
	return out, nil
}

// idxEntry is one object of a pack index being written.
type idxEntry struct {
	hash   plumbing.Hash
	offset int64
	crc    uint32
}

// encodePackIndex is the version 2 index of the pack whose checksum is
// pack and whose objects are es (sorted here), as git writes it: built
// in memory and written with one call (go-git's encoder writes each
// fan-out entry with a call of its own, a system call each on a file).
func encodePackIndex(es []idxEntry, pack plumbing.Hash) []byte {
	slices.SortFunc(es, func(a, b idxEntry) int { return bytes.Compare(a.hash[:], b.hash[:]) })
	n := len(es)
	large := 0
	for _, e := range es {
		if e.offset > 0x7fffffff {
			large++
		}
	}
	b := make([]byte, idxHeader+n*(20+4+4)+large*8+2*20)
	copy(b, "\xfftOc\x00\x00\x00\x02")
	var fanout [256]uint32
	for _, e := range es {
		fanout[e.hash[0]]++
	}
	total := uint32(0)
	for i, c := range fanout {
		total += c
		binary.BigEndian.PutUint32(b[8+i*4:], total)
	}
	names, crcs, offs := b[idxHeader:], b[idxHeader+n*20:], b[idxHeader+n*24:]
	large64 := b[idxHeader+n*28:]
	k := 0
	for i, e := range es {
		copy(names[i*20:], e.hash[:])
		binary.BigEndian.PutUint32(crcs[i*4:], e.crc)
		if e.offset <= 0x7fffffff {
			binary.BigEndian.PutUint32(offs[i*4:], uint32(e.offset))
			continue
		}
		binary.BigEndian.PutUint32(offs[i*4:], uint32(k)|0x80000000)
		binary.BigEndian.PutUint64(large64[k*8:], uint64(e.offset))
		k++
	}
	tail := b[len(b)-40:]
	copy(tail, pack[:])
	sum := sha1.Sum(b[:len(b)-20])
	copy(tail[20:], sum[:])
	return b
}
