package memory

import (
	"github.com/quirehq/quire/internal/mapfile"

	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"unsafe"

	"github.com/quirehq/quire/internal/replace"
)

// wordVectorsMagic starts a compact word vectors file.
const wordVectorsMagic = "quire-wordvectors-2\n"

// OpenWordVectorsCached is OpenWordVectors that keeps the compact form of
// the file in cacheDir (keyed by the file's path, size and modification
// time) and maps that into memory instead of reading the text file when it
// is there: a 300 MB GloVe file is parsed once, and a later `quire search`
// touches only the pages of the words it looks up. A missing or damaged
// compact file is rebuilt; cacheDir "" disables it.
func OpenWordVectorsCached(path, cacheDir string) (*WordVectors, error) {
	if cacheDir == "" {
		return OpenWordVectors(path)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("word vectors: %w", err)
	}
	abs, _ := filepath.Abs(path)
	key := sha256.Sum256([]byte(abs + "\x00" + strconv.FormatInt(st.Size(), 10) + "\x00" + strconv.FormatInt(st.ModTime().UnixNano(), 10)))
	file := filepath.Join(cacheDir, "wordvectors-"+hex.EncodeToString(key[:8]))
	if wv, err := openCompact(file); err == nil {
		return wv, nil
	}
	wv, err := OpenWordVectors(path)
	if err != nil {
		return nil, err
	}
	// A compact file that cannot be written only costs time next run.
	_ = writeFileAtomic(file, wv.writeCompact)
	return wv, nil
}

// The compact file: the magic; the model (uvarint length, bytes); dims,
// n and the word bytes' total (uint32, uint32, uint64, little-endian);
// n entries of (offset uint32, length uint32, row uint32) sorted by word;
// the word bytes; n rows of (scale float32, dims int8) in row order.
const entrySize = 12

// writeCompact writes the compact file of wv.
func (wv *WordVectors) writeCompact(w io.Writer) error {
	n := len(wv.scale)
	words := make([]string, n)
	for word, row := range wv.index {
		words[row] = word
	}
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if words[a] < words[b] {
			return -1
		}
		if words[a] > words[b] {
			return 1
		}
		return 0
	})
	bw := bufio.NewWriterSize(w, 1<<20)
	var buf [binary.MaxVarintLen64]byte
	bw.WriteString(wordVectorsMagic)
	bw.Write(buf[:binary.PutUvarint(buf[:], uint64(len(wv.model)))])
	bw.WriteString(wv.model)
	var total uint64
	for _, word := range words {
		total += uint64(len(word))
	}
	le := binary.LittleEndian
	bw.Write(le.AppendUint64(le.AppendUint32(le.AppendUint32(nil, uint32(wv.dims)), uint32(n)), total))
	// Word bytes in sorted order; entries point into them.
	var off uint32
	for _, row := range order {
		bw.Write(le.AppendUint32(le.AppendUint32(le.AppendUint32(nil, off), uint32(len(words[row]))), uint32(row)))
		off += uint32(len(words[row]))
	}
	for _, row := range order {
		bw.WriteString(words[row])
	}
	for row := 0; row < n; row++ {
		bw.Write(le.AppendUint32(nil, math.Float32bits(wv.scale[row])))
		bw.Write(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(wv.q[row*wv.dims:]))), wv.dims))
	}
	return bw.Flush()
}

// mappedVectors looks words up in a compact file's bytes.
type mappedVectors struct {
	n, dims       int
	entries, blob []byte
	rows          []byte
}

// openCompact maps a compact file (reads it where mapping is not
// available) and checks its layout.
func openCompact(file string) (*WordVectors, error) {
	data, unmap, err := mapfile.Read(file, 1)
	if err != nil {
		return nil, err
	}
	wv, err := parseCompact(data)
	if err != nil {
		if unmap != nil {
			unmap()
		}
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if unmap != nil {
		runtime.AddCleanup(wv, func(unmap func()) { unmap() }, unmap)
	}
	return wv, nil
}

func parseCompact(data []byte) (*WordVectors, error) {
	rest, ok := bytes.CutPrefix(data, []byte(wordVectorsMagic))
	if !ok {
		return nil, errors.New("not a compact word vectors file")
	}
	mlen, k := binary.Uvarint(rest)
	if k <= 0 || mlen > 1<<10 || uint64(len(rest)-k) < mlen+16 {
		return nil, errors.New("damaged header")
	}
	model := string(rest[k : k+int(mlen)])
	rest = rest[k+int(mlen):]
	le := binary.LittleEndian
	dims, n, total := int(le.Uint32(rest)), int(le.Uint32(rest[4:])), le.Uint64(rest[8:])
	rest = rest[16:]
	need := uint64(n)*entrySize + total + uint64(n)*uint64(4+dims)
	if dims < 1 || dims > 1<<16 || n < 1 || uint64(len(rest)) != need {
		return nil, errors.New("damaged layout")
	}
	m := &mappedVectors{n: n, dims: dims}
	m.entries, rest = rest[:n*entrySize], rest[n*entrySize:]
	m.blob, m.rows = rest[:total], rest[total:]
	return &WordVectors{model: model, dims: dims, mapped: m}, nil
}

// lookup binary-searches the sorted entries for word.
func (m *mappedVectors) lookup(word []byte) (int32, float32, []int8, bool) {
	le := binary.LittleEndian
	lo, hi := 0, m.n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		e := m.entries[mid*entrySize:]
		off, n := uint64(le.Uint32(e)), uint64(le.Uint32(e[4:]))
		if off+n > uint64(len(m.blob)) {
			return 0, 0, nil, false // damaged: treat as unknown
		}
		switch c := bytes.Compare(m.blob[off:off+n], word); {
		case c < 0:
			lo = mid + 1
		case c > 0:
			hi = mid
		default:
			row := le.Uint32(e[8:])
			if int(row) >= m.n {
				return 0, 0, nil, false
			}
			r := m.rows[int(row)*(4+m.dims):]
			scale := math.Float32frombits(le.Uint32(r))
			if math.IsNaN(float64(scale)) || math.IsInf(float64(scale), 0) || scale < 0 {
				return 0, 0, nil, false // damaged: treat as unknown
			}
			q := unsafe.Slice((*int8)(unsafe.Pointer(&r[4])), m.dims)
			return int32(row), scale, q, true
		}
	}
	return 0, 0, nil, false
}

// writeFileAtomic writes file through a temporary file and a rename.
func writeFileAtomic(file string, write func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".wordvectors-*")
	if err != nil {
		return err
	}
	werr := write(tmp)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := replace.File(tmp.Name(), file); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
