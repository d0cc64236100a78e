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

// errIdxFormat is an index that is not a version 2 pack index.
var errIdxFormat = errors.New("not a version 2 pack index")

// idxHeader is a version 2 pack index's header: magic, version and the
// fan-out table of 256 counts.
const idxHeader = 8 + 256*4

// checkIdxChecksum checks a pack index's own checksum: the last 20
// bytes, over everything before them (newDiskIndex has checked the
// layout).
func checkIdxChecksum(b []byte) error {
	if sum := sha1.Sum(b[:len(b)-20]); !bytes.Equal(sum[:], b[len(b)-20:]) {
		return fmt.Errorf("its checksum does not match its content (%d bytes)", len(b))
	}
	return nil
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
