package workspace

import (
	"bytes"
	"fmt"
	"io/fs"
	"strings"
	"unicode/utf8"
)

// MaxFileBytes is the largest file a workspace may hold (1 MiB): the git
// endpoint refuses a larger one, and a context file is read whole only up
// to this size.
const MaxFileBytes = 1 << 20

// Codes of the problems CheckFile reports.
const (
	CodeSymlink      = "symlink"
	CodeSpecialFile  = "special-file"
	CodeFileTooLarge = "file-too-large"
	CodeInvalidUTF8  = "invalid-utf8"
	CodeUnreadable   = "read"
	CodeBadName      = "file-name-encoding"
	CodeControlChar  = "control-character"
)

// CheckName applies the rule on names: a path is valid UTF-8 without
// empty, . or .. elements (fs.ValidPath) and without control characters
// (C0, DEL: a newline or NUL in a name breaks logs, git's plumbing and
// what a store can hold), so every reader can open it and every message
// can name it. The problem names the path up to its first
// bad element (a directory with a bad name, for everything below it); a
// path that breaks the rule gets no other check.
func CheckName(p string) []Problem {
	if fs.ValidPath(p) && utf8.ValidString(p) && CheckLine("", p) == nil {
		return nil
	}
	elems := strings.Split(p, "/")
	for i, e := range elems {
		if e == "" || e == "." || e == ".." || !utf8.ValidString(e) || CheckLine("", e) != nil {
			elems = elems[:i+1]
			break
		}
	}
	bad := strings.Join(elems, "/")
	if utf8.ValidString(bad) {
		if te, ok := CheckLine("", bad).(*TextError); ok {
			return []Problem{{Path: strings.Map(visibleControl, bad), Severity: SeverityError, Code: CodeBadName,
				Message: fmt.Sprintf("the name %q holds a control character (U+%04X at byte %d): names must be printable text; rename it", bad, te.Rune, te.Offset)}}
		}
	}
	return []Problem{{Path: strings.ToValidUTF8(bad, "\uFFFD"), Severity: SeverityError, Code: CodeBadName,
		Message: fmt.Sprintf("the name %q is not valid UTF-8: nothing can read it; rename it", bad)}}
}

// visibleControl shows a control character as the symbol Unicode has for
// it (U+2400 + c; U+2421 for DEL), so a path can be printed on one line.
func visibleControl(r rune) rune {
	switch {
	case r < 0x20:
		return 0x2400 + r
	case r == 0x7f:
		return 0x2421
	}
	return r
}

// CheckFile applies the rules every file of a workspace obeys, whatever
// reads it: it is a regular file (no symbolic link, FIFO, device or
// socket), at most MaxFileBytes long, and valid, printable UTF-8 when it
// is a text file (IsTextFile): no control character but tab, CR and LF
// (CheckText). p is the file's slash path; info describes it
// without following a link (Dir's Stat and a git snapshot's do); read
// returns its content and is only called for a text file within the size
// limit. Every finding is an error: `quire check`, the git endpoint and
// the API refuse the same files.
func CheckFile(p string, info fs.FileInfo, read func() ([]byte, error)) []Problem {
	return checkFile(p, info, read, 0)
}

// checkFile is CheckFile of a file whose first checked bytes are a text
// that passed the rule on content (CheckContentAfter).
func checkFile(p string, info fs.FileInfo, read func() ([]byte, error), checked int) []Problem {
	errorf := func(code string, line int, format string, args ...any) []Problem {
		return []Problem{{Path: p, Line: line, Severity: SeverityError, Code: code, Message: fmt.Sprintf(format, args...)}}
	}
	mode := info.Mode()
	switch {
	case mode&fs.ModeSymlink != 0:
		return errorf(CodeSymlink, 0, "symbolic links are not allowed: links are neither read nor accepted by the git endpoint; replace it with the file itself")
	case mode.IsDir():
		return nil
	case !mode.IsRegular():
		return errorf(CodeSpecialFile, 0, "is not a regular file (%s): only regular files are read; remove it", modeName(mode))
	case info.Size() > MaxFileBytes:
		return errorf(CodeFileTooLarge, 0, "%s exceeds the 1 MiB file limit (%d > %d bytes): the git endpoint refuses it; split or shorten the file",
			humanBytes(info.Size()), info.Size(), MaxFileBytes)
	}
	if !IsTextFile(p) || read == nil {
		return nil
	}
	b, err := read()
	if err != nil {
		return errorf(CodeUnreadable, 0, "cannot read: %v", unwrapPath(err))
	}
	if prob, bad := CheckContentAfter(p, b, checked); bad {
		return []Problem{prob}
	}
	return nil
}

// CheckContent applies the rule on a text file's content (valid UTF-8,
// printable: CheckText) to b, the content of the file p, and returns the
// problem of content that breaks it, at its line.
func CheckContent(p string, b []byte) (Problem, bool) {
	if off := FirstInvalidUTF8(b); off >= 0 {
		return Problem{Path: p, Line: 1 + bytes.Count(b[:off], []byte{'\n'}), Severity: SeverityError, Code: CodeInvalidUTF8,
			Message: fmt.Sprintf("not valid UTF-8 (first bad byte at offset %d); context files must be UTF-8 text: re-save the file as UTF-8", off)}, true
	}
	if err := CheckText("", b); err != nil {
		return controlProblem(p, b, err.(*TextError)), true
	}
	return Problem{}, false
}

// CheckContentAfter is CheckContent(p, b) for content whose first
// checked bytes are a text that passed it (a log an append extends): the
// rule looks at each byte, or each UTF-8 sequence, alone, and valid
// UTF-8 ends a sequence, so only the rest is scanned. A problem is the
// one CheckContent finds in b whole, at its line in b.
func CheckContentAfter(p string, b []byte, checked int) (Problem, bool) {
	if checked > 0 && checked <= len(b) {
		if _, bad := CheckContent(p, b[checked:]); !bad {
			return Problem{}, false
		}
	}
	return CheckContent(p, b)
}

// controlProblem is the error CheckFile reports for the control character
// te found in the file p holding b: its line, column and byte offset.
func controlProblem(p string, b []byte, te *TextError) Problem {
	before := b[:te.Offset]
	start := bytes.LastIndexByte(before, '\n') + 1
	return Problem{Path: p, Line: 1 + bytes.Count(before, []byte{'\n'}), Column: 1 + utf8.RuneCount(before[start:]),
		Severity: SeverityError, Code: CodeControlChar,
		Message: fmt.Sprintf("holds the control character U+%04X at byte %d: context files must be printable text (tab, CR and LF are allowed); remove it", te.Rune, te.Offset)}
}

// FirstInvalidUTF8 is the offset of the first byte of b that is not part
// of valid UTF-8, or -1.
func FirstInvalidUTF8(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

func modeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
