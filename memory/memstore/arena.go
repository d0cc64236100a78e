package memstore

import (
	"os"
	"runtime"
	"slices"
	"unsafe"
)

// A vectorArena holds the unit vectors of an agent's approximate index
// (ivf) off the Go heap, with an int8 code of each on the heap (but for
// an index that scans, whose sieve holds codes of its own): a query
// scores the vectors of the lists it reads by their codes (a quarter of
// the bytes) and only its final candidates by the float32 vectors, so
// that the cosines it returns are exact, as the exact scan's and
// PostgreSQL's are. The float32 vectors are written to an unlinked
// temporary file mapped read-only: they take page cache the kernel can
// reclaim, not heap; where a file cannot be mapped they stay on the heap.
//
// Vectors are stored in slots, arenaSlots to a segment (one mapping and
// one code block each). An arena is shared by the successive versions of
// an agent's index, each appending the vectors it lacks; the agent's
// vectors that point into it are slices of its mappings, valid while an
// index holding the arena is reachable (a cleanup unmaps the file after).
// Appends are not safe for concurrent use: Index calls are serialised.
type vectorArena struct {
	dims int
	segs []*arenaSeg
	// bySeg is segs sorted by the address of their vectors, for slotOf.
	bySeg []*arenaSeg
	n     int // slots used
	file  *arenaFile
	coded bool // the segments hold codes
}

// arenaSlots is the vectors of a segment: 24 MiB of float32 vectors and
// 6 MiB of codes at 384 dimensions.
const arenaSlots = 1 << 14

type arenaSeg struct {
	first  int       // the slot of its first vector
	floats []float32 // arenaSlots vectors, mapped (or on the heap)
	mapped bool      // floats is a read-only mapping of the file
	codes  []int8    // arenaSlots codes; nil when the arena keeps none
	scales []float32 // by slot: the code's scale (code × scale ≈ vector)
}

// newArena returns an empty arena for vectors of length dims, with
// their codes when coded, backed by a fresh unlinked file in dir (see
// openArenaFile) when one can be made.
func newArena(dims int, dir string, coded bool) *vectorArena {
	a := &vectorArena{dims: dims, file: openArenaFile(dir), coded: coded}
	if a.file != nil {
		runtime.AddCleanup(a, (*arenaFile).close, a.file)
	}
	return a
}

// garbage reports whether the arena holds more than twice live vectors
// (and a segment): versions of the agent's chunks no index holds any more.
func (a *vectorArena) garbage(live int) bool { return a.n > 2*live+arenaSlots }

// slotOf returns the slot of v when v is one of the arena's vectors.
func (a *vectorArena) slotOf(v []float32) (int, bool) {
	if len(v) != a.dims || len(a.bySeg) == 0 {
		return 0, false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(v)))
	k, found := slices.BinarySearchFunc(a.bySeg, p, func(s *arenaSeg, p uintptr) int {
		base := uintptr(unsafe.Pointer(unsafe.SliceData(s.floats)))
		switch {
		case p < base:
			return 1
		case p >= base+uintptr(len(s.floats))*4:
			return -1
		}
		return 0
	})
	if !found {
		return 0, false
	}
	s := a.bySeg[k]
	off := int(p-uintptr(unsafe.Pointer(unsafe.SliceData(s.floats)))) / 4
	if off%a.dims != 0 {
		return 0, false
	}
	return s.first + off/a.dims, true
}

// put stores the vectors at positions todo of vectors in the arena,
// making them slices of it, and records their slots in slot. A vector
// the file could not take stays on the heap with slot -1 (scored exactly
// by queries).
func (a *vectorArena) put(vectors [][]float32, todo []int, slot []int32) {
	for len(todo) > 0 {
		s := a.tail()
		lo := a.n - s.first
		batch := todo[:min(len(todo), arenaSlots-lo)]
		todo = todo[len(batch):]
		a.n += len(batch)
		buf := s.floats[lo*a.dims : (lo+len(batch))*a.dims]
		if s.mapped {
			buf = make([]float32, len(batch)*a.dims)
		}
		for j, i := range batch {
			copy(buf[j*a.dims:(j+1)*a.dims], vectors[i])
			if a.coded {
				k := lo + j
				quantize(s.codes[k*a.dims:(k+1)*a.dims], &s.scales[k], vectors[i])
			}
		}
		if s.mapped && a.file.write(len(a.segs)-1, lo*a.dims, buf) != nil {
			for _, i := range batch {
				slot[i] = -1
			}
			continue
		}
		for j, i := range batch {
			k := lo + j
			vectors[i] = s.floats[k*a.dims : (k+1)*a.dims : (k+1)*a.dims]
			slot[i] = int32(s.first + k)
		}
	}
}

// tail returns the segment the next slot is in, adding it when needed.
func (a *vectorArena) tail() *arenaSeg {
	if a.n < len(a.segs)*arenaSlots {
		return a.segs[len(a.segs)-1]
	}
	s := &arenaSeg{first: a.n}
	if a.coded {
		s.codes, s.scales = make([]int8, arenaSlots*a.dims), make([]float32, arenaSlots)
	}
	s.floats, s.mapped = a.file.segment(len(a.segs), arenaSlots*a.dims)
	a.segs = append(a.segs, s)
	a.bySeg = append(a.bySeg, s)
	slices.SortFunc(a.bySeg, func(x, y *arenaSeg) int {
		px, py := uintptr(unsafe.Pointer(unsafe.SliceData(x.floats))), uintptr(unsafe.Pointer(unsafe.SliceData(y.floats)))
		switch {
		case px < py:
			return -1
		case px > py:
			return 1
		}
		return 0
	})
	return s
}

// approx returns the approximate dot product of the vector in slot of
// a coded arena of segments segs and vectors of length dims with the
// query of code q.
func approx(segs []*arenaSeg, dims int, slot int32, q *queryCode) float64 {
	s := segs[int(slot)/arenaSlots]
	k := int(slot) % arenaSlots
	return float64(s.scales[k]*q.scale) * float64(q.dot(s.codes[k*dims:(k+1)*dims]))
}

// heapVectors replaces the vectors of vectors that are the arena's by
// copies on the heap, for an index that keeps no arena.
func (a *vectorArena) heapVectors(vectors [][]float32) {
	for i, v := range vectors {
		if _, ok := a.slotOf(v); ok {
			vectors[i] = slices.Clone(v)
		}
	}
}

// arenaFile is the unlinked file an arena's vectors are mapped from; nil
// keeps them on the heap.
type arenaFile struct {
	f         *os.File
	maps      [][]byte
	segFloats int // floats of a segment
}

// openArenaFile returns a fresh unlinked file in dir ("": the temporary
// directory), or nil when none can be made or mapped there.
func openArenaFile(dir string) *arenaFile {
	if !canMap {
		return nil
	}
	f, err := os.CreateTemp(dir, "quire-vectors-*")
	if err != nil {
		return nil
	}
	os.Remove(f.Name()) // the mappings and f keep it until closed
	return &arenaFile{f: f}
}

// segment returns segment k of n floats: a read-only mapping of the
// file's bytes for it, or heap memory when there is no file or the
// mapping fails.
func (af *arenaFile) segment(k, n int) (floats []float32, mapped bool) {
	if af != nil {
		af.segFloats = n
		size := int64(n) * 4
		if err := af.f.Truncate(int64(k+1) * size); err == nil {
			if m, err := mapReadOnly(af.f, int64(k)*size, int(size)); err == nil {
				af.maps = append(af.maps, m)
				return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(m))), n), true
			}
		}
	}
	return make([]float32, n), false
}

// write writes floats at offset off of segment k of the file (of
// arenaSlots vectors of dims floats).
func (af *arenaFile) write(k, off int, floats []float32) error {
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(floats))), 4*len(floats))
	_, err := af.f.WriteAt(b, 4*(int64(k)*int64(af.segFloats)+int64(off)))
	return err
}

// close unmaps the file's segments and closes it.
func (af *arenaFile) close() {
	for _, m := range af.maps {
		unmap(m)
	}
	af.f.Close()
}
