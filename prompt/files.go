package prompt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/bits"
	"path"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/quirehq/quire/workspace"
)

// text is a context file's content as truncation sees it. Invalid UTF-8 is
// replaced, byte by byte, with U+FFFD, so every offset in a Report refers
// to this decoded text and every char is one code point.
//
// A file up to MaxFileBytes is complete: head holds all of it and tail is
// empty. A larger file is sampled: head holds its first bytes and tail its
// last, at least enough for any cut its budget can ask for.
type text struct {
	head, tail string
	sampled    bool
	chars      int   // code points in the whole file
	size       int64 // bytes of the whole decoded file
	fileBytes  int64 // bytes of the file as read: CR LF as LF, before U+FFFD and BOM
	lines      int   // newlines in the whole file (sampled only)
	tailChars  int   // code points in tail (sampled only)
	tailLines  int   // newlines in tail (sampled only)
	invalid    int   // invalid bytes replaced by U+FFFD
	ascii      bool  // the whole file is ASCII: char index == byte index
}

// complete returns the full content; only valid when !t.sampled.
func (t *text) content() string { return t.head }

// listedOpener is a file system that opens a file its own listing showed
// to be regular without looking at it again first (workspace.Dir).
type listedOpener interface {
	OpenListed(name string, e fs.DirEntry) (fs.File, error)
}

// listedReader is a file system that reads a whole regular file its own
// listing showed in one call (workspace.Dir).
type listedReader interface {
	ReadListed(name string, e fs.DirEntry, max int64) ([]byte, bool)
}

// loadText reads name from fsys. listed is its entry in a listing of its
// directory, or nil. window is the number of code points of head and of
// tail a sampled file must keep. A complete file's text is made in dst
// (its caller's allocation), a sampled one's in a text of its own.
func loadText(fsys fs.FS, name string, listed fs.DirEntry, window int, dst *text) (*text, error) {
	if lr, ok := fsys.(listedReader); ok && listed != nil && listed.Type().IsRegular() {
		if data, ok := lr.ReadListed(name, listed, workspace.MaxFileBytes); ok {
			return dst.complete(data), nil
		}
	}
	var f fs.File
	var err error
	if lo, ok := fsys.(listedOpener); ok && listed != nil && listed.Type().IsRegular() {
		f, err = lo.OpenListed(name, listed)
	} else {
		f, err = fsys.Open(name)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s is a directory, not a file", name)
	}
	if st.Size() > 0 && st.Size() <= workspace.MaxFileBytes && st.Mode().IsRegular() {
		// A regular file holds what Stat said when it was opened: read
		// that much, without a second read to see the end.
		buf := make([]byte, st.Size())
		n, err := io.ReadFull(f, buf)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) { // shrank: what is there
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		return dst.complete(buf[:n]), nil
	}
	if st.Size() <= workspace.MaxFileBytes {
		// One buffer of the announced size plus a byte to notice a file
		// that grew (or an FS whose Stat was wrong).
		buf := make([]byte, st.Size()+1)
		n, err := io.ReadFull(f, buf)
		switch {
		case err == nil: // more than announced: stream the rest
			return sampleText(io.MultiReader(bytes.NewReader(buf), f), window)
		case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			return dst.complete(buf[:n]), nil
		default:
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
	}
	return sampleText(f, window)
}

// complete makes t the complete text of b and returns it, taking
// ownership of b: the caller must not modify b afterwards (it becomes the
// text's string without a copy). Every CR LF in b is read as LF first
// (workspace.NormalizeNewlines: the rule on line endings).
func (t *text) complete(b []byte) *text {
	b = workspace.NormalizeNewlines(b)
	if len(b) == 0 {
		return t.completeString("")
	}
	return t.completeString(unsafe.String(unsafe.SliceData(b), len(b)))
}

// newText makes a complete text of s.
func newText(s string) *text { return new(text).completeString(s) }

// completeString makes t the complete text of s and returns it.
func (t *text) completeString(s string) *text {
	*t = text{fileBytes: int64(len(s))}
	// A UTF-8 byte order mark is how some editors start a file, not text:
	// it is neither injected nor charged to the budget.
	s = strings.TrimPrefix(s, byteOrderMark)
	// Pure ASCII, the common case, is valid UTF-8: one pass says both.
	t.chars, t.ascii = countChars(s)
	if !t.ascii && !utf8.ValidString(s) {
		s, t.invalid = replaceInvalid([]byte(s))
		t.chars, _ = countChars(s)
	}
	t.head = s
	t.size = int64(len(s))
	return t
}

// byteOrderMark is U+FEFF in UTF-8.
const byteOrderMark = "\uFEFF"

// countChars counts code points in valid UTF-8 and reports whether s is
// pure ASCII. It looks at 64 bytes at a time, skipping runs of ASCII: a
// code point starts at every byte that is not a continuation byte
// (10xxxxxx).
func countChars(s string) (int, bool) {
	cont, high := 0, uint64(0)
	// A slice of the string's bytes whose length the compiler can see
	// at each load, so the loads need no bounds checks.
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	le := binary.LittleEndian
	for len(b) >= 64 {
		x := b[:64:64]
		h := (le.Uint64(x[0:]) | le.Uint64(x[8:]) | le.Uint64(x[16:]) | le.Uint64(x[24:]) |
			le.Uint64(x[32:]) | le.Uint64(x[40:]) | le.Uint64(x[48:]) | le.Uint64(x[56:])) & hiBits
		b = b[64:]
		if h == 0 {
			continue
		}
		high |= h
		for j := 0; j < 64; j += 8 {
			cont += bits.OnesCount64(contBits(le.Uint64(x[j:])))
		}
	}
	for len(b) >= 8 {
		w := le.Uint64(b)
		high |= w & hiBits
		cont += bits.OnesCount64(contBits(w))
		b = b[8:]
	}
	for _, c := range b {
		high |= uint64(c & 0x80)
		if c&0xC0 == 0x80 {
			cont++
		}
	}
	return len(s) - cont, high == 0
}

const loBits, hiBits = 0x0101010101010101, 0x8080808080808080

// word loads the eight bytes of s at i as a little-endian integer.
func word(s string, i int) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:]), 8))
}

// contBits has bit 0 of each byte set where that byte of w is a UTF-8
// continuation byte: bit 7 set and bit 6 clear.
func contBits(w uint64) uint64 { return (w & hiBits) >> 7 & (^w >> 6) & loBits }

// replaceInvalid returns b with every byte that is not part of a valid
// UTF-8 sequence replaced by U+FFFD, and how many were replaced.
func replaceInvalid(b []byte) (string, int) {
	var sb strings.Builder
	sb.Grow(len(b) + 16)
	bad := 0
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			sb.WriteRune(utf8.RuneError)
			bad++
		} else {
			sb.Write(b[:size])
		}
		b = b[size:]
	}
	return sb.String(), bad
}

// sampleText streams r once, keeping the first and last window code points
// (plus the slack line-boundary moves need), and counting everything.
// Every CR LF is read as LF (workspace.NewlineReader).
func sampleText(r io.Reader, window int) (*text, error) {
	r = workspace.NewlineReader(r)
	keep := 4*(window+lineSlack) + 4 // bytes: a code point is at most 4
	t := &text{sampled: true}
	head := make([]byte, 0, keep)
	ring := make([]byte, 0, 2*keep)
	buf := make([]byte, 64<<10)
	carry := 0 // bytes of an incomplete rune kept at the front of buf
	for {
		n, err := r.Read(buf[carry:])
		chunk := buf[:carry+n]
		atEOF := errors.Is(err, io.EOF)
		if err != nil && !atEOF {
			return nil, err
		}
		// Hold back a trailing incomplete rune for the next read.
		hold := 0
		if !atEOF {
			hold = incompleteSuffix(chunk)
		}
		dec := chunk[:len(chunk)-hold]
		t.fileBytes += int64(len(dec))
		if t.size == 0 && len(head) == 0 {
			dec = bytes.TrimPrefix(dec, []byte(byteOrderMark))
		}
		if !utf8.Valid(dec) {
			s, bad := replaceInvalid(dec)
			t.invalid += bad
			dec = []byte(s)
		}
		for _, c := range dec {
			if c&0xC0 != 0x80 {
				t.chars++
			}
		}
		t.size += int64(len(dec))
		t.lines += bytes.Count(dec, []byte{'\n'})
		if len(head) < keep {
			head = append(head, dec[:min(len(dec), keep-len(head))]...)
		}
		if len(ring)+len(dec) > cap(ring) {
			// Keep the last keep bytes of ring+dec without growing ring.
			drop := len(ring) + len(dec) - keep
			if drop >= len(ring) {
				ring = append(ring[:0], dec[drop-len(ring):]...)
			} else {
				ring = append(ring[:copy(ring, ring[drop:])], dec...)
			}
		} else {
			ring = append(ring, dec...)
		}
		copy(buf, chunk[len(chunk)-hold:])
		carry = hold
		if atEOF {
			break
		}
	}
	if len(ring) > keep {
		ring = ring[len(ring)-keep:]
	}
	// Trim both windows to whole code points.
	for len(head) > 0 && !utf8.Valid(head) {
		head = head[:len(head)-1]
	}
	for len(ring) > 0 && !utf8.RuneStart(ring[0]) {
		ring = ring[1:]
	}
	t.head, t.tail = string(head), string(ring)
	t.tailChars, _ = countChars(t.tail)
	t.tailLines = strings.Count(t.tail, "\n")
	if int64(len(t.head)) >= t.size { // smaller than it looked: complete after all
		t.sampled, t.tail, t.tailChars, t.tailLines = false, "", 0, 0
		t.chars, t.ascii = countChars(t.head)
	}
	return t, nil
}

// incompleteSuffix returns how many trailing bytes of b start a rune that
// b does not finish.
func incompleteSuffix(b []byte) int {
	for i := 1; i <= 3 && i <= len(b); i++ {
		c := b[len(b)-i]
		if utf8.RuneStart(c) {
			if c >= 0xC0 && !utf8.FullRune(b[len(b)-i:]) {
				return i
			}
			return 0
		}
	}
	return 0
}

// File is a context file of an agent as a request sees it: where it comes
// from and its decoded text.
type File struct {
	// Name is how the prompt names the file, e.g. "SOUL.md" or
	// "memory/2026-11-22.md".
	Name string
	// Path is the file's slash path within the workspace's fs.FS.
	Path string
	// User is the user id whose copy this is, or "" for the agent-level file.
	User string
	text *text
	key  uint64 // content fingerprint, for token counts (0 with EstimateTokens)
	seed bool   // a new user's template (Seeder), not a stored file
}

// joinPath joins slash paths, treating "." as the root.
func joinPath(elem ...string) string {
	if len(elem) == 2 && cleanRel(elem[0]) && elem[1] != "." && cleanRel(elem[1]) {
		if elem[0] == "." {
			return elem[1]
		}
		return elem[0] + "/" + elem[1] // what path.Join gives, without Clean
	}
	return path.Join(elem...)
}

// cleanRel reports whether p is a clean relative slash path ("." included)
// that path.Clean would leave alone.
func cleanRel(p string) bool {
	if p == "." {
		return true
	}
	if p == "" || p[0] == '/' || p[len(p)-1] == '/' {
		return false
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}
