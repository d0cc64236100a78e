package workspace

import (
	"errors"
	"fmt"
	"strings"
)

// maxIDBytes bounds an encoded user or room directory name. Most file systems
// allow 255 bytes per name; the encoding expands a byte to at most three.
const maxEncodedBytes = 255

// ErrBadID is returned for a user or room id that cannot name a directory:
// empty, holding a control character (CheckLine: the id goes into commit
// trailers and the memory index), too long once encoded, or (when
// decoding) not produced by EncodeID.
var ErrBadID = errors.New("bad id")

// EncodeID turns an opaque user or room id into a single path-safe directory
// or file name. The encoding is reversible (DecodeID), injective, and keeps
// ids readable where it can: ASCII lower-case letters, digits, '-', '_' and
// '.' (except a leading '.') stand for themselves; every other byte,
// upper-case letters included (so ids differing only in case never collide on
// case-insensitive file systems), becomes %XX. No id can produce "", ".",
// "..", a slash or a hidden name, so no id escapes users/ or rooms/.
func EncodeID(id string) (string, error) {
	if id == "" {
		return "", fmt.Errorf("%w: id is empty", ErrBadID)
	}
	if err := CheckLine("", id); err != nil {
		return "", fmt.Errorf("%w: %w", ErrBadID, err)
	}
	var b strings.Builder
	b.Grow(len(id))
	for i := 0; i < len(id); i++ {
		c := id[i]
		if plainIDByte(c) && !(c == '.' && i == 0) {
			b.WriteByte(c)
			continue
		}
		const hex = "0123456789ABCDEF"
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	if b.Len() > maxEncodedBytes {
		return "", fmt.Errorf("%w: id %.40q… is %d bytes once encoded; the limit is %d", ErrBadID, id, b.Len(), maxEncodedBytes)
	}
	return b.String(), nil
}

// DecodeID reverses EncodeID. It rejects any name EncodeID would not have
// produced, so a hand-made directory such as "..", "Alice", "a%2f" or
// "a%00" is reported instead of being mistaken for a user.
func DecodeID(name string) (string, error) {
	if name == "" || len(name) > maxEncodedBytes {
		return "", fmt.Errorf("%w: %q is not an encoded id", ErrBadID, name)
	}
	var b strings.Builder
	b.Grow(len(name))
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '%':
			if i+2 >= len(name) {
				return "", fmt.Errorf("%w: %q has a truncated %%XX escape", ErrBadID, name)
			}
			hi, ok1 := unhex(name[i+1])
			lo, ok2 := unhex(name[i+2])
			if !ok1 || !ok2 {
				return "", fmt.Errorf("%w: %q has an invalid %%XX escape", ErrBadID, name)
			}
			v := hi<<4 | lo
			if plainIDByte(v) && !(v == '.' && b.Len() == 0) {
				return "", fmt.Errorf("%w: %q escapes %q, which is never escaped", ErrBadID, name, string(rune(v)))
			}
			b.WriteByte(v)
			i += 2
		case plainIDByte(c) && !(c == '.' && i == 0):
			b.WriteByte(c)
		default:
			return "", fmt.Errorf("%w: %q contains %q, which EncodeID never produces", ErrBadID, name, string(rune(c)))
		}
	}
	if err := CheckLine("", b.String()); err != nil {
		return "", fmt.Errorf("%w: %q decodes to an id EncodeID refuses: %w", ErrBadID, name, err)
	}
	return b.String(), nil
}

func plainIDByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.'
}

// unhex accepts only upper-case hex digits, so every id has one encoding.
func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
