package workspace

import "fmt"

// The rule on text, the one place it is written: what a write through the
// API or MCP may hold, what a pushed context file may hold (CheckFile) and
// what the memory index takes (memory.Documents). Text is printable: no C0
// control character (U+0000 to U+001F) and no DEL (U+007F), except tab,
// CR and LF inside text content. A one-line value — a user or room id, a
// path — holds no control character at all. A NUL cannot be stored in a
// PostgreSQL text column, and a control character in a commit header or
// trailer makes other git implementations refuse the commit; nothing
// that breaks the rule may reach git or the index.

// TextError is a control character where only printable text is allowed.
type TextError struct {
	// Field names what holds the character ("text", "content", "user");
	// "" when the caller names it.
	Field string
	// Offset is the character's byte offset in the value.
	Offset int
	// Rune is the character: a C0 control or DEL.
	Rune rune
	// OneLine is set for a one-line value (an id, a path), where tab, CR
	// and LF are not allowed either.
	OneLine bool
}

func (e *TextError) Error() string {
	rule := "text must be printable (tab, CR and LF are allowed)"
	if e.OneLine {
		rule = "it must be printable, without any control character"
	}
	msg := fmt.Sprintf("control character U+%04X at byte %d: %s", e.Rune, e.Offset, rule)
	if e.Field != "" {
		msg = e.Field + ": " + msg
	}
	return msg
}

// CheckText returns a *TextError for the first control character of b
// other than tab, CR and LF (text content: an append, a file), naming
// field; nil when b is printable.
func CheckText[T ~string | ~[]byte](field string, b T) error {
	for i := 0; i < len(b); i++ {
		if c := b[i]; isControl(c) && c != '\t' && c != '\n' && c != '\r' {
			return &TextError{Field: field, Offset: i, Rune: rune(c)}
		}
	}
	return nil
}

// CheckLine returns a *TextError for the first control character of s,
// tab, CR and LF included (a one-line value: an id, a path), naming
// field; nil when s is printable.
func CheckLine[T ~string | ~[]byte](field string, s T) error {
	for i := 0; i < len(s); i++ {
		if isControl(s[i]) {
			return &TextError{Field: field, Offset: i, Rune: rune(s[i]), OneLine: true}
		}
	}
	return nil
}

// isControl reports whether c is a C0 control character or DEL. No byte
// of a multi-byte UTF-8 sequence is one, so text is checked byte by byte.
func isControl(c byte) bool { return c < 0x20 || c == 0x7f }
