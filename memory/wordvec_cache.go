package memory

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
)

// wordVectorsMagic starts a compact word vectors file (version 1).
const wordVectorsMagic = "quire-wordvectors-1\n"

// OpenWordVectorsCached is OpenWordVectors that keeps the compact form of
// the file in cacheDir (keyed by the file's path, size and modification
// time) and reads that instead of the text file when it is there: a
// 300 MB GloVe file is parsed once, not on every `quire search`. A
// missing or unreadable cache is rebuilt; cacheDir "" disables it.
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
	if f, err := os.Open(file); err == nil {
		wv, rerr := readWordVectors(bufio.NewReaderSize(f, 1<<20))
		f.Close()
		if rerr == nil {
			return wv, nil
		}
	}
	wv, err := OpenWordVectors(path)
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(file, wv.writeTo); err != nil {
		return wv, nil // a cache that cannot be written only costs time
	}
	return wv, nil
}

// writeTo writes the compact form: magic, model, dims, words, then per
// word its scale and quantised row, in row order.
func (wv *WordVectors) writeTo(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	words := make([]string, len(wv.scale))
	for word, row := range wv.index {
		words[row] = word
	}
	var buf [binary.MaxVarintLen64]byte
	putString := func(s string) {
		bw.Write(buf[:binary.PutUvarint(buf[:], uint64(len(s)))])
		bw.WriteString(s)
	}
	bw.WriteString(wordVectorsMagic)
	putString(wv.model)
	bw.Write(buf[:binary.PutUvarint(buf[:], uint64(wv.dims))])
	bw.Write(buf[:binary.PutUvarint(buf[:], uint64(len(words)))])
	for row, word := range words {
		putString(word)
		binary.Write(bw, binary.LittleEndian, math.Float32bits(wv.scale[row]))
		for _, x := range wv.q[row*wv.dims : (row+1)*wv.dims] {
			bw.WriteByte(byte(x))
		}
	}
	return bw.Flush()
}

// readWordVectors reads what writeTo wrote.
func readWordVectors(r *bufio.Reader) (*WordVectors, error) {
	magic := make([]byte, len(wordVectorsMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != wordVectorsMagic {
		return nil, errors.New("not a compact word vectors file")
	}
	getString := func() (string, error) {
		n, err := binary.ReadUvarint(r)
		if err != nil || n > 1<<20 {
			return "", fmt.Errorf("bad string: %v", err)
		}
		b := make([]byte, n)
		_, err = io.ReadFull(r, b)
		return string(b), err
	}
	model, err := getString()
	if err != nil {
		return nil, err
	}
	dims, err := binary.ReadUvarint(r)
	if err != nil || dims == 0 || dims > 1<<16 {
		return nil, fmt.Errorf("bad dimensions %d: %v", dims, err)
	}
	n, err := binary.ReadUvarint(r)
	if err != nil || n > 1<<26 {
		return nil, fmt.Errorf("bad word count %d: %v", n, err)
	}
	wv := &WordVectors{model: model, dims: int(dims), index: make(map[string]int32, n),
		q: make([]int8, 0, int(n)*int(dims)), scale: make([]float32, 0, n)}
	row := make([]byte, dims)
	for i := uint64(0); i < n; i++ {
		word, err := getString()
		if err != nil {
			return nil, err
		}
		var bits uint32
		if err := binary.Read(r, binary.LittleEndian, &bits); err != nil {
			return nil, err
		}
		if _, err := io.ReadFull(r, row); err != nil {
			return nil, err
		}
		wv.index[word] = int32(i)
		wv.scale = append(wv.scale, math.Float32frombits(bits))
		for _, b := range row {
			wv.q = append(wv.q, int8(b))
		}
	}
	return wv, nil
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
	if err := os.Rename(tmp.Name(), file); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
