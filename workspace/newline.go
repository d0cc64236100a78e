package workspace

import (
	"bytes"
	"io"
)

// The rule on line endings, the one place it is written: a CR LF pair is
// a line ending, the same as LF, and a context file is read with every
// CR LF as LF before anything is counted or charged to a budget. A git
// checkout with core.autocrlf=true (Windows' default) holds CR LF where
// the commit holds LF, and an editor on Windows may save either: with the
// rule, the prompt assembled from the working tree (quire prompt --dir,
// the language server's preview) is byte for byte the prompt the daemon
// serves from the commit. A CR on its own is text, kept as it is (git
// keeps it too, so both sides agree on it).

// NormalizeNewlines rewrites every CR LF in b as LF, in place, and
// returns the shortened b (b itself when it holds none).
func NormalizeNewlines(b []byte) []byte {
	i := bytes.Index(b, crlf)
	if i < 0 {
		return b
	}
	w := i
	for r := i; r < len(b); r++ {
		if b[r] == '\r' && r+1 < len(b) && b[r+1] == '\n' {
			continue
		}
		b[w] = b[r]
		w++
	}
	return b[:w]
}

var crlf = []byte("\r\n")

// NewlineReader reads r with every CR LF as LF (NormalizeNewlines for a
// stream: a CR at the end of one read waits for the next).
func NewlineReader(r io.Reader) io.Reader { return &newlineReader{r: r} }

type newlineReader struct {
	r   io.Reader
	buf [8 << 10]byte
	out []byte // normalised bytes not yet returned
	cr  bool   // a CR held back from the last read
	err error  // r's error, returned once out is drained
}

func (n *newlineReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for len(n.out) == 0 {
		if n.err != nil {
			return 0, n.err
		}
		off := 0
		if n.cr {
			n.buf[0], off, n.cr = '\r', 1, false
		}
		m, err := n.r.Read(n.buf[off:])
		n.err = err
		out := NormalizeNewlines(n.buf[:off+m])
		if err == nil && len(out) > 0 && out[len(out)-1] == '\r' {
			n.cr = true
			out = out[:len(out)-1]
		}
		n.out = out
	}
	c := copy(p, n.out)
	n.out = n.out[c:]
	return c, nil
}
