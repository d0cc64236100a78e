package skills

import (
	"strings"
	"unicode/utf8"
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
		if !printable(l) {
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
	colon := strings.Index(l, ": ")
	if colon <= 0 {
		return "", "", false
	}
	key = l[:colon]
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' && i > 0) {
			return "", "", false
		}
	}
	if key == "<<" {
		return "", "", false
	}
	rest := strings.TrimLeft(l[colon+2:], " ")
	if rest == "" {
		return "", "", false
	}
	switch rest[0] {
	case '"':
		end := strings.IndexByte(rest[1:], '"')
		if end < 0 {
			return "", "", false
		}
		value = rest[1 : 1+end]
		if strings.IndexByte(value, '\\') >= 0 || !afterScalar(rest[2+end:]) {
			return "", "", false
		}
	case '\'':
		var b strings.Builder
		i := 1
		for {
			j := strings.IndexByte(rest[i:], '\'')
			if j < 0 {
				return "", "", false
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
		value = b.String()
		if !afterScalar(rest[i:]) {
			return "", "", false
		}
	default:
		if strings.IndexByte("-?:,[]{}#&*!|>%@`", rest[0]) >= 0 {
			return "", "", false
		}
		if i := strings.Index(rest, " #"); i >= 0 {
			rest = rest[:i]
		}
		value = strings.TrimRight(rest, " ")
		if strings.Contains(value, ": ") || strings.HasSuffix(value, ":") {
			return "", "", false
		}
		switch value {
		case "~", "null", "Null", "NULL":
			return "", "", false
		}
	}
	return key, value, true
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
