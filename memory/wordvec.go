package memory

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"unsafe"

	"github.com/quirehq/quire/memory/bm25"
)

// WordVectors is the offline embedder with word-level semantics: it reads
// pre-trained word vectors from a GloVe or word2vec text file (one word
// and its components per line; word2vec's "count dimensions" first line is
// skipped) and embeds a text as the weighted mean of the vectors of its
// words (bm25.Tokenize), L2-normalised. Unlike Builtin, "car" and
// "automobile" are close when the file says so. Words the file does not
// know are left out; a text with none is the zero vector.
//
// The files list words from the most to the least frequent, and a word's
// weight follows its rank r (from 1): r / (r + 50). Very frequent words
// ("the", "of") barely count, words past the first few hundred count
// almost fully: a smooth inverse-frequency weighting (Arora et al.'s SIF
// with Zipf frequencies) that needs no word counts.
//
// The vectors are held compactly: each row quantised to int8 with its own
// scale (the largest component's magnitude / 127), about a quarter of the
// float32 size (341,000 words × 100 dimensions take some 35 MB), which
// moves a cosine by well under 0.01. OpenWordVectorsCached keeps that form
// in a binary file next to the embedding cache, so later runs skip the
// text file.
type WordVectors struct {
	model  string
	dims   int
	index  map[string]int32 // word → row
	q      []int8           // rows of dims quantised components
	scale  []float32        // by row
	mapped *mappedVectors   // instead of index, q and scale: a compact file
	row    []float32        // parse scratch
	fields [][]byte         // parse scratch
}

// appendFields appends the space-separated fields of line to dst.
func appendFields(dst [][]byte, line []byte) [][]byte {
	start := -1
	for i, c := range line {
		space := c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
		switch {
		case space && start >= 0:
			dst = append(dst, line[start:i])
			start = -1
		case !space && start < 0:
			start = i
		}
	}
	if start >= 0 {
		dst = append(dst, line[start:])
	}
	return dst
}

// wordRankHalf is the rank at which a word weighs one half.
const wordRankHalf = 50

// OpenWordVectors reads a word vectors file (see WordVectors).
func OpenWordVectors(path string) (*WordVectors, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("word vectors: %w", err)
	}
	defer f.Close()
	var size int64
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	wv, err := loadWordVectors(f, size)
	if err != nil {
		return nil, fmt.Errorf("word vectors %s: %w", path, err)
	}
	return wv, nil
}

// LoadWordVectors reads word vectors in the GloVe or word2vec text format
// from r. Every line must have the same number of components; a word seen
// twice keeps its first vector.
func LoadWordVectors(r io.Reader) (*WordVectors, error) { return loadWordVectors(r, 0) }

// loadWordVectors is LoadWordVectors given the input's size in bytes
// (0: unknown), from which it sizes its tables after the first vector:
// growing them by doubling would hold two copies at the end.
func loadWordVectors(r io.Reader, size int64) (*WordVectors, error) {
	h := sha256.New()
	br := bufio.NewReaderSize(io.TeeReader(r, h), 1<<20)
	wv := &WordVectors{index: map[string]int32{}}
	sized := false
	for line := 1; ; line++ {
		text, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, fmt.Errorf("line %d: longer than %d bytes", line, br.Size())
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if perr := wv.parseLine(line, text); perr != nil {
			return nil, perr
		}
		if size > 0 && len(wv.scale) == 1 && !sized {
			sized = true
			rows := int(size/int64(max(len(text), 1))*5/4) + 16
			wv.q = append(make([]int8, 0, rows*wv.dims), wv.q...)
			wv.scale = append(make([]float32, 0, rows), wv.scale...)
			index := make(map[string]int32, rows)
			for k, v := range wv.index {
				index[k] = v
			}
			wv.index = index
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if wv.dims == 0 {
		return nil, errors.New("no word vectors: want lines of a word and its components, as GloVe writes them")
	}
	wv.model = fmt.Sprintf("wordvectors-q8-%s-%d", hex.EncodeToString(h.Sum(nil)[:6]), wv.dims)
	wv.row, wv.fields = nil, nil
	return wv, nil
}

// parseLine adds the vector on one line (with or without its newline).
func (wv *WordVectors) parseLine(line int, text []byte) error {
	wv.fields = appendFields(wv.fields[:0], text)
	fields := wv.fields
	if len(fields) == 0 {
		return nil
	}
	if line == 1 && len(fields) == 2 { // word2vec: "count dimensions"
		if _, err := strconv.Atoi(string(fields[0])); err == nil {
			if _, err := strconv.Atoi(string(fields[1])); err == nil {
				return nil
			}
		}
	}
	if wv.dims == 0 {
		wv.dims = len(fields) - 1
		if wv.dims < 1 {
			return fmt.Errorf("line %d: a word without components", line)
		}
	}
	if len(fields) != wv.dims+1 {
		return fmt.Errorf("line %d: %d components, want %d like the first line", line, len(fields)-1, wv.dims)
	}
	word := string(bytes.ToLower(fields[0]))
	if _, dup := wv.index[word]; dup {
		return nil
	}
	wv.row = wv.row[:0]
	var peak float32
	for i, f := range fields[1:] {
		// No copy of the field: ParseFloat keeps no reference to it.
		x, err := strconv.ParseFloat(unsafe.String(&f[0], len(f)), 32)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("line %d: component %d: %q is not a finite number", line, i+1, f)
		}
		wv.row = append(wv.row, float32(x))
		peak = max(peak, float32(math.Abs(x)))
	}
	wv.index[word] = int32(len(wv.scale))
	wv.appendRow(wv.row, peak)
	return nil
}

// appendRow quantises one row whose largest magnitude is peak.
func (wv *WordVectors) appendRow(row []float32, peak float32) {
	scale := peak / 127
	for _, x := range row {
		var v int8
		if scale > 0 {
			v = int8(math.Round(float64(x / scale)))
		}
		wv.q = append(wv.q, v)
	}
	wv.scale = append(wv.scale, scale)
}

// Model names the file's vectors: a digest of its content and the length.
func (wv *WordVectors) Model() string { return wv.model }

// Dimensions returns the vector length of the file.
func (wv *WordVectors) Dimensions() int { return wv.dims }

// Words returns the number of words the file holds.
func (wv *WordVectors) Words() int {
	if wv.mapped != nil {
		return wv.mapped.n
	}
	return len(wv.index)
}

// lookup returns a word's row (its rank − 1), scale and components.
func (wv *WordVectors) lookup(word []byte) (int32, float32, []int8, bool) {
	if wv.mapped != nil {
		return wv.mapped.lookup(word)
	}
	row, ok := wv.index[string(word)]
	if !ok {
		return 0, 0, nil, false
	}
	return row, wv.scale[row], wv.q[int(row)*wv.dims : int(row+1)*wv.dims], true
}

// Embed returns the weighted mean vector of each text's known words.
func (wv *WordVectors) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var buf []byte
	sum := make([]float64, wv.dims) // float64: no sum of float32s overflows it
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		clear(sum)
		buf = bm25.EachToken(t, buf, func(tok []byte) {
			row, scale, q, ok := wv.lookup(tok)
			if !ok {
				return
			}
			rank := float64(row + 1)
			w := rank / (rank + wordRankHalf) * float64(scale)
			for j, x := range q {
				sum[j] += w * float64(x)
			}
		})
		var norm float64
		for _, x := range sum {
			norm += x * x
		}
		v := make([]float32, wv.dims)
		if norm > 0 && !math.IsInf(norm, 0) {
			inv := 1 / math.Sqrt(norm)
			for j, x := range sum {
				v[j] = float32(x * inv)
			}
		}
		out[i] = v
	}
	return out, nil
}
