package skills

import (
	"encoding/binary"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// scan reads front matter made only of top-level "key: value" lines, the
// shape nearly every SKILL.md has, without the YAML decoder. A value may be
// a plain scalar or a one-line single- or double-quoted string without
// escapes. Blank lines and whole-line comments are skipped. On anything
// else it returns false having changed nothing, and the caller decodes the
// head as YAML; for every head it accepts, the result equals the decoder's
// (FuzzScanMatchesYAML).
func (p *docParser) scan(head string) bool {
	type kv struct {
		key, value string
		line       int
	}
	var buf [8]kv
	fields := buf[:0]
	line := 1 // 1-based within the file: the head starts on line 2
	for len(head) > 0 {
		line++
		l := head
		if i := strings.IndexByte(head, '\n'); i >= 0 {
			l, head = head[:i], head[i+1:]
		} else {
			head = ""
		}
		if !asciiText(l) && !printable(l) {
			return false
		}
		if l == "" || l[0] == '#' {
			continue
		}
		key, value, ok := scanLine(l)
		if !ok {
			return false
		}
		fields = append(fields, kv{key, value, line})
	}
	if len(fields) == 0 {
		return false // the decoder words the "empty" problem
	}
	for _, f := range fields {
		if p.field(f.key, f.line) {
			p.scalar(f.key, f.line, f.value, false)
		}
	}
	return true
}

// scanLine splits one "key: value" line; ok is false when the line needs
// the YAML decoder.
func scanLine(l string) (key, value string, ok bool) {
	// The key is the run of key characters the line starts with, and the
	// first ": " must end it (a key holding ':' or ' ' needs the decoder).
	colon := 0
	for colon < len(l) && keyChar[l[colon]] && (l[colon] != '-' || colon > 0) {
		colon++
	}
	if colon == 0 || colon+1 >= len(l) || l[colon] != ':' || l[colon+1] != ' ' {
		return "", "", false
	}
	if colon > maxYAMLKey { // the decoder refuses it: let it say so
		return "", "", false
	}
	key = l[:colon]
	rest := strings.TrimLeft(l[colon+2:], " ")
	if rest == "" {
		return "", "", false
	}
	switch rest[0] {
	case '"':
		value, ok = doubleQuoted(rest)
	case '\'':
		value, ok = singleQuoted(rest)
	default:
		value, ok = plainScalar(rest)
	}
	if !ok {
		return "", "", false
	}
	return key, value, true
}

// doubleQuoted reads the double-quoted value rest starts with; ok is false
// when it holds an escape or is not alone on the line.
func doubleQuoted(rest string) (value string, ok bool) {
	end := strings.IndexByte(rest[1:], '"')
	if end < 0 {
		return "", false
	}
	value = rest[1 : 1+end]
	if strings.IndexByte(value, '\\') >= 0 || !afterScalar(rest[2+end:]) {
		return "", false
	}
	return value, true
}

// singleQuoted reads the single-quoted value rest starts with, undoubling
// its quotes; ok is false when it is not closed or not alone on the line.
func singleQuoted(rest string) (value string, ok bool) {
	if end := strings.IndexByte(rest[1:], '\''); end >= 0 && (2+end == len(rest) || rest[2+end] != '\'') {
		// No doubled quote: the value is the text between the quotes.
		if !afterScalar(rest[2+end:]) {
			return "", false
		}
		return rest[1 : 1+end], true
	}
	var b strings.Builder
	i := 1
	for {
		j := strings.IndexByte(rest[i:], '\'')
		if j < 0 {
			return "", false
		}
		b.WriteString(rest[i : i+j])
		i += j + 1
		if i < len(rest) && rest[i] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		break
	}
	if !afterScalar(rest[i:]) {
		return "", false
	}
	return b.String(), true
}

// plainScalar reads the plain value rest holds, up to a comment; ok is
// false when the decoder could read it otherwise (an indicator first, a
// ": " inside, a ':' last, a null).
func plainScalar(rest string) (value string, ok bool) {
	if strings.IndexByte("-?:,[]{}#&*!|>%@`", rest[0]) >= 0 {
		return "", false
	}
	// A comment starts at " #"; the value must hold no ": " before it
	// (nor end in ':'). Both are rare: look for '#' and ':' eight
	// bytes at a time.
	end := len(rest)
	for i := plainStop(rest, 0); i+1 < len(rest); i = plainStop(rest, i+1) {
		if rest[i] == ':' && rest[i+1] == ' ' {
			return "", false
		}
		if rest[i+1] == '#' && rest[i] == ' ' {
			end = i
			break
		}
	}
	value = strings.TrimRight(rest[:end], " ")
	if strings.HasSuffix(value, ":") {
		return "", false
	}
	switch value {
	case "~", "null", "Null", "NULL":
		return "", false
	}
	return value, true
}

// maxYAMLKey is the longest key, in bytes, the YAML decoder takes without
// a question mark (a longer one "could not find expected ':'").
const maxYAMLKey = 1024

// keyChar holds the characters a key the scanner reads may have ('-'
// not first).
var keyChar = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
	}
	return t
}()

// plainStop returns the first index i >= from where s[i] is ':' or s[i+1]
// is '#' (a byte that may end a plain value or start a comment), or
// len(s). It skips eight bytes at a time where neither occurs.
func plainStop(s string, from int) int {
	i := from
	for ; i+9 <= len(s); i += 8 {
		// Bytes i..i+7 for ':' and bytes i+1..i+8 for '#'.
		if zeroByte(word(s, i)^(loBits*':'))|zeroByte(word(s, i+1)^(loBits*'#')) != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if s[i] == ':' || i+1 < len(s) && s[i+1] == '#' {
			return i
		}
	}
	return len(s)
}

const loBits, hiBits = 0x0101010101010101, 0x8080808080808080

// word loads the eight bytes of s at i as a little-endian integer.
func word(s string, i int) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:]), 8))
}

// zeroByte is non-zero exactly when some byte of w is zero.
func zeroByte(w uint64) uint64 { return (w - loBits) & ^w & hiBits }

// asciiText reports whether s is printable ASCII only (0x20–0x7e), eight
// bytes at a time: such a line is printable, and its chars are its bytes.
func asciiText(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := word(s, i)
		// High bit set, a byte below 0x20, or DEL.
		if w&hiBits|(w-loBits*0x20)&^w&hiBits|zeroByte(w^(loBits*0x7f)) != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// runeCount is utf8.RuneCountInString, skipping ASCII eight bytes at a
// time.
func runeCount(s string) int {
	i := 0
	for ; i+8 <= len(s) && word(s, i)&hiBits == 0; i += 8 {
	}
	return i + utf8.RuneCountInString(s[i:])
}

// afterScalar reports whether what follows a quoted scalar is nothing,
// blanks, or a comment.
func afterScalar(s string) bool {
	t := strings.TrimLeft(s, " ")
	return t == "" || t[0] == '#' && len(t) < len(s)
}

// printable reports whether s holds only characters the YAML scanner takes
// without complaint or special meaning in a one-line scalar: no control
// characters, tabs, line or paragraph separators, BOMs or non-characters.
func printable(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r < 0xA0 || r == 0x2028 || r == 0x2029 || r == 0xFEFF || r >= 0xFFFE && r <= 0xFFFF || r == utf8.RuneError && n == 1 {
			return false
		}
		i += n
	}
	return true
}
