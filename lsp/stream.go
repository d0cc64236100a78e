package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"

	"go.lsp.dev/jsonrpc2"
)

// The limits of the framing reader.
const (
	// defaultMaxBody is the largest message body the server accepts; a
	// larger one is read past and answered with an error.
	defaultMaxBody = 64 << 20
	// maxHeaderLine is the longest header line; a longer one is garbage.
	maxHeaderLine = 8 << 10
	// maxUnframedBytes bounds a JSON value sent without a header that the
	// reader scans to find its end (and its id, to answer it).
	maxUnframedBytes = 1 << 20
	// readChunk is how much is read from the stream at a time.
	readChunk = 32 << 10
)

// findMark returns the offset in b of the first complete Content-Length
// header line (case-insensitive "content-length:", up to 8 blanks, 1 to 12
// digits, up to 8 blanks, an optional CR and a LF), or -1. Such a line can
// never occur inside valid JSON: outside strings a bare word is invalid,
// and a string cannot hold a raw line break. That makes it a safe place to
// pick up the stream again after a malformed frame. It looks only where a
// line ends, which compact JSON has none of, so it runs at memchr speed.
func findMark(b []byte) int {
	for off := 0; ; {
		i := bytes.IndexByte(b[off:], '\n')
		if i < 0 {
			return -1
		}
		nl := off + i
		if start := markEndingAt(b, nl); start >= 0 {
			return start
		}
		off = nl + 1
	}
}

// markEndingAt returns where the Content-Length header line that ends with
// the LF at b[nl] starts, or -1 if no such line ends there.
func markEndingAt(b []byte, nl int) int {
	const name = "content-length:"
	i := nl - 1
	if i >= 0 && b[i] == '\r' {
		i--
	}
	blanks := func() bool {
		n := 0
		for i >= 0 && (b[i] == ' ' || b[i] == '\t') {
			i--
			n++
		}
		return n <= 8
	}
	if !blanks() {
		return -1
	}
	digits := 0
	for i >= 0 && b[i] >= '0' && b[i] <= '9' {
		i--
		digits++
	}
	if digits == 0 || digits > 12 || !blanks() {
		return -1
	}
	start := i - len(name) + 1
	if start < 0 {
		return -1
	}
	for k := 0; k < len(name); k++ {
		c := b[start+k]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[k] {
			return -1
		}
	}
	return start
}

// markOverlap is how many bytes of earlier input are searched again when
// new input arrives, so that a header split over two reads is found.
const markOverlap = 64

// frameStream is a jsonrpc2.Stream with the LSP base protocol framing
// (Content-Length header, blank line, JSON body) that survives malformed
// input: a frame it cannot read is answered with a JSON-RPC error where
// that is possible (-32700 for what is not JSON or not framed, -32600 for
// JSON that is not a request) and the stream is picked up again at the next
// header. go.lsp.dev/jsonrpc2's own reader ends the connection instead.
type frameStream struct {
	conn io.ReadWriteCloser
	log  *slog.Logger
	// atEOF runs once the input has ended, before Read reports it: the
	// session answers the requests already read first.
	atEOF func()
	// replies, when set, learns of every reply written, and of the end
	// of writing.
	replies *replies

	maxBody int // bodies over this many bytes are refused

	buf []byte // read but not yet consumed
	eof error  // the error that ended the input, once seen

	// leftover is set after a frame was answered whose end is uncertain
	// (a header without a usable Content-Length, a body that is not JSON
	// and so perhaps shorter than announced): what follows up to the next
	// header belongs to that answer and is skipped without another.
	leftover bool

	writeMu sync.Mutex
}

// newFrameStream reads and writes LSP frames on conn.
func newFrameStream(conn io.ReadWriteCloser, log *slog.Logger, atEOF func()) *frameStream {
	return &frameStream{conn: conn, log: log, atEOF: atEOF, maxBody: defaultMaxBody}
}

// Read implements jsonrpc2.Stream: the next message that decodes, after
// answering every malformed frame before it.
func (s *frameStream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		if err := ctx.Err(); err != nil {
			s.endReplies()
			return nil, 0, err
		}
		body, n, err := s.nextBody()
		if err != nil {
			if s.atEOF != nil {
				s.atEOF()
			}
			s.endReplies()
			return nil, 0, err
		}
		if body == nil {
			continue // a malformed frame, answered
		}
		msg, err := jsonrpc2.DecodeMessage(body)
		if err == nil {
			return msg, n, nil
		}
		s.answerUndecodable(body, err)
	}
}

// answerUndecodable replies to a framed body that is not a JSON-RPC
// message.
func (s *frameStream) answerUndecodable(body []byte, err error) {
	trimmed := bytes.TrimSpace(body)
	switch {
	case !json.Valid(body):
		s.leftover = true // the Content-Length may have been wrong
		s.reply(jsonrpc2.ID{}, jsonrpc2.ParseError, fmt.Sprintf("quire lsp: the body of %d bytes is not valid JSON; the message was skipped", len(body)))
	case len(trimmed) > 0 && trimmed[0] == '[':
		s.reply(jsonrpc2.ID{}, jsonrpc2.InvalidRequest, "quire lsp: batches are not part of the language server protocol; send one message per frame")
	default:
		s.reply(idOf(body), jsonrpc2.InvalidRequest, fmt.Sprintf("quire lsp: not a JSON-RPC 2.0 request, notification or response (%v); it was skipped", err))
	}
}

// idOf is the id of a JSON object, if it has one that JSON-RPC allows (a
// number or a string); otherwise the null id.
func idOf(body []byte) jsonrpc2.ID {
	var v struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &v) != nil || len(v.ID) == 0 {
		return jsonrpc2.ID{}
	}
	var str string
	if json.Unmarshal(v.ID, &str) == nil {
		return jsonrpc2.NewStringID(str)
	}
	if n, err := strconv.ParseInt(string(v.ID), 10, 64); err == nil {
		return jsonrpc2.NewNumberID(n)
	}
	return jsonrpc2.ID{}
}

// reply writes an error response for a message that never reached the
// dispatcher.
func (s *frameStream) reply(id jsonrpc2.ID, code jsonrpc2.Code, msg string) {
	s.log.Warn("malformed message", "code", int64(code), "problem", msg)
	body, err := jsonrpc2.EncodeMessage(jsonrpc2.NewResponse(id, nil, jsonrpc2.NewError(code, msg)))
	if err == nil {
		_, err = s.writeFrame(body)
	}
	if err != nil {
		s.log.Debug("answer a malformed message", "err", err)
	}
}

// endReplies tells replies that nothing more is written: jsonrpc2
// writes nothing once Read or a write has failed.
func (s *frameStream) endReplies() {
	if s.replies != nil {
		s.replies.end()
	}
}

// fill reads more input into buf. It returns the error that ended the
// input once there is no more.
func (s *frameStream) fill() error {
	if s.eof != nil {
		return s.eof
	}
	if cap(s.buf)-len(s.buf) < readChunk {
		grown := make([]byte, len(s.buf), 2*cap(s.buf)+readChunk)
		copy(grown, s.buf)
		s.buf = grown
	}
	n, err := s.conn.Read(s.buf[len(s.buf):cap(s.buf)])
	s.buf = s.buf[:len(s.buf)+n]
	if err != nil {
		s.eof = err
		if n > 0 {
			return nil
		}
		return err
	}
	return nil
}

// consume drops the first n bytes of buf.
func (s *frameStream) consume(n int) {
	rest := copy(s.buf, s.buf[n:])
	s.buf = s.buf[:rest]
}

// ended turns the end of the input into Read's error: io.EOF between
// frames, io.ErrUnexpectedEOF (after an answer) inside one.
func (s *frameStream) ended(err error, inFrame bool) error {
	if !errors.Is(err, io.EOF) {
		return err
	}
	if inFrame || len(bytes.TrimSpace(s.buf)) > 0 {
		s.reply(jsonrpc2.ID{}, jsonrpc2.ParseError, "quire lsp: the stream ended in the middle of a message")
		return io.ErrUnexpectedEOF
	}
	return io.EOF
}

// nextBody returns the body of the next well-framed message, or nil after
// answering a malformed frame, with the frame's size in bytes.
func (s *frameStream) nextBody() ([]byte, int64, error) {
	// Blank lines between frames are tolerated.
	for {
		i := 0
		for i < len(s.buf) && isSpace(s.buf[i]) {
			i++
		}
		s.consume(i)
		if len(s.buf) > 0 {
			break
		}
		if err := s.fill(); err != nil {
			return nil, 0, s.ended(err, false)
		}
	}
	quiet := s.leftover
	s.leftover = false
	if c := s.buf[0]; c == '{' || c == '[' {
		return nil, 0, s.unframed(quiet)
	}
	length, headerLen, err := s.header(quiet)
	switch {
	case err != nil:
		return nil, 0, err
	case headerLen == 0:
		return nil, 0, nil // garbage, answered and skipped
	case length < 0:
		return nil, 0, nil // no usable Content-Length, answered
	}
	body, complete, err := s.body(length)
	if err != nil {
		return nil, 0, err
	}
	if !complete {
		return nil, 0, nil
	}
	return body, int64(headerLen + length), nil
}

// header parses a header block at the start of buf and consumes it. It
// returns the Content-Length and the header's size; a size of 0 means the
// input was not a header (answered, and skipped to the next header), a
// length of -1 a header block without a usable Content-Length (answered).
func (s *frameStream) header(quiet bool) (length, size int, err error) {
	length = -1
	pos := 0
	var problem string
	for {
		end := bytes.IndexByte(s.buf[pos:], '\n')
		if end < 0 {
			// An incomplete line: garbage as soon as it cannot be a
			// header field any more.
			if bad := headerGarbage(s.buf[pos:]); bad != "" || len(s.buf)-pos > maxHeaderLine {
				if bad == "" {
					bad = "a header line is longer than 8 KiB"
				}
				s.consume(pos)
				return 0, 0, s.garbage(bad, quiet)
			}
			if err := s.fill(); err != nil {
				return 0, 0, s.ended(err, true)
			}
			continue
		}
		line := s.buf[pos : pos+end+1]
		pos += end + 1
		content := bytes.TrimRight(line, "\r\n")
		if len(content) == 0 {
			break // the blank line that ends the header
		}
		if bad := fieldProblem(content); bad != "" {
			s.consume(pos)
			return 0, 0, s.garbage(bad, quiet)
		}
		name, value, _ := bytes.Cut(content, []byte(":"))
		name, i := fieldName(name, quiet)
		if i > 0 {
			// Text without a line break ran into the next header
			// ("helloContent-Length: 52"): answer the text, keep the header.
			s.consume(pos - len(line) + i)
			return 0, 0, s.garbage(fmt.Sprintf("expected a header such as Content-Length, got %q", truncateForLog(name[:i])), quiet)
		}
		if !bytes.EqualFold(name, []byte("Content-Length")) {
			continue // Content-Type and unknown fields are ignored
		}
		if n, why := contentLength(value); why != "" {
			problem = why
		} else {
			length, problem = n, ""
		}
	}
	s.consume(pos)
	if length < 0 {
		if problem == "" {
			problem = "the header has no Content-Length"
		}
		s.leftover = true
		s.reply(jsonrpc2.ID{}, jsonrpc2.ParseError, "quire lsp: "+problem+"; the message was skipped")
		return -1, pos, nil
	}
	return length, pos, nil
}

// fieldProblem says why a whole header line (without its line break) is
// not a header field, or "" when it is one.
func fieldProblem(content []byte) string {
	bad := headerGarbage(content)
	if bad == "" && (bytes.IndexByte(content, ':') < 0 || len(content) > maxHeaderLine) {
		bad = fmt.Sprintf("%q is not a header field", truncateForLog(content))
	}
	return bad
}

// fieldName returns a header field's name, and where "content-length"
// starts inside it when other text ran into the header (else 0). When
// quiet, a name that is the tail of "content-length" is Content-Length:
// the body of the malformed frame just answered was announced too short
// and took the start of this header with it.
func fieldName(name []byte, quiet bool) ([]byte, int) {
	if quiet && len(name) < len("content-length") && bytes.HasSuffix([]byte("content-length"), bytes.ToLower(name)) {
		name = []byte("Content-Length")
	}
	return name, max(bytes.LastIndex(bytes.ToLower(name), []byte("content-length")), 0)
}

// contentLength parses the value of a Content-Length field: a positive
// number of bytes, or the problem with it.
func contentLength(value []byte) (n int, problem string) {
	n, err := strconv.Atoi(string(bytes.TrimSpace(value)))
	switch {
	case err != nil || n < 0:
		return 0, fmt.Sprintf("the Content-Length %q is not a number of bytes", truncateForLog(bytes.TrimSpace(value)))
	case n == 0:
		return 0, "the Content-Length is 0: a message cannot be empty"
	}
	return n, ""
}

// headerGarbage says why a header line (complete or not) cannot be a
// header field: its name must be a token followed by a colon.
func headerGarbage(line []byte) string {
	for i, c := range line {
		if c == ':' {
			if i == 0 {
				return "a header line starts with a colon"
			}
			return ""
		}
		if !isTokenChar(c) {
			if c == '\r' && i == len(line)-1 {
				return "" // the CR of a CRLF not yet complete
			}
			return fmt.Sprintf("expected a header such as Content-Length, got %q", truncateForLog(line))
		}
	}
	return ""
}

// isTokenChar reports whether c may appear in a header field name.
func isTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return bytes.IndexByte([]byte("!#$%&'*+-.^_`|~"), c) >= 0
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// truncateForLog shortens what an error message quotes of the input.
func truncateForLog(b []byte) string {
	const max = 40
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

// garbage answers input that is not a frame (unless quiet) and skips to
// the next header.
func (s *frameStream) garbage(why string, quiet bool) error {
	if !quiet {
		s.reply(jsonrpc2.ID{}, jsonrpc2.ParseError, "quire lsp: "+why+"; skipped to the next Content-Length header")
	}
	searched := 0
	for {
		if at := findMark(s.buf[max(0, searched-markOverlap):]); at >= 0 {
			s.consume(max(0, searched-markOverlap) + at)
			return nil
		}
		// Keep only what a header split over two reads needs.
		if keep := markOverlap; len(s.buf) > keep {
			s.consume(len(s.buf) - keep)
		}
		searched = len(s.buf)
		if err := s.fill(); err != nil {
			if errors.Is(err, io.EOF) {
				s.buf = s.buf[:0]
				return io.EOF // already answered
			}
			return err
		}
	}
}

// body reads a body of length bytes. It is incomplete (answered, nil)
// when a new header shows up inside it: the frame was cut off, and the
// stream goes on at that header. A body over maxBodyBytes is read past.
func (s *frameStream) body(length int) (body []byte, complete bool, err error) {
	searched := 0
	discarded := 0
	tooLarge := length > s.maxBody
	for {
		have := min(len(s.buf), length-discarded)
		from := max(0, searched-markOverlap)
		// A header that begins inside the body (it may end past it) is
		// the next frame: this one was cut off.
		if at := findMark(s.buf[from:]); at >= 0 && from+at < have {
			cut := from + at
			s.consume(cut)
			s.reply(jsonrpc2.ID{}, jsonrpc2.ParseError, fmt.Sprintf("quire lsp: a message announced %d bytes but a new header began after %d; the cut-off message was skipped", length, discarded+cut))
			return nil, false, nil
		}
		searched = have
		if discarded+have == length {
			break
		}
		if tooLarge && len(s.buf) > 2*markOverlap {
			// Read past a body over the limit without keeping it.
			drop := len(s.buf) - markOverlap
			s.consume(drop)
			discarded += drop
			searched -= drop
		}
		if err := s.fill(); err != nil {
			return nil, false, s.ended(err, true)
		}
	}
	rest := length - discarded
	if tooLarge {
		s.consume(rest)
		s.reply(jsonrpc2.ID{}, jsonrpc2.InvalidRequest, fmt.Sprintf("quire lsp: a message of %d bytes is over the limit of %d bytes; it was skipped", length, s.maxBody))
		return nil, false, nil
	}
	// A fresh slice: decoded requests borrow their bytes until handled.
	body = append([]byte(nil), s.buf[:rest]...)
	s.consume(rest)
	return body, true, nil
}

// unframed reads past a JSON value that came without a header and answers
// it (with its id when it has one), unless it is the body of a header
// block that was already answered.
func (s *frameStream) unframed(quiet bool) error {
	var sc jsonScanner
	scanned := 0
	for {
		if mark := findMark(s.buf[max(0, scanned-markOverlap):]); mark >= 0 {
			at := max(0, scanned-markOverlap) + mark
			if at <= scanned {
				// The value did not end before the header: the scanner
				// has seen everything up to scanned.
			} else if end, ok := sc.scan(s.buf[scanned:at]); ok {
				return s.answerUnframed(scanned+end, quiet)
			}
			s.consume(at)
			if !quiet {
				s.reply(jsonrpc2.ID{}, jsonrpc2.ParseError, "quire lsp: a message came without a Content-Length header; it was skipped")
			}
			return nil
		}
		end, ok := sc.scan(s.buf[scanned:])
		if ok {
			return s.answerUnframed(scanned+end, quiet)
		}
		scanned = len(s.buf)
		if scanned > maxUnframedBytes {
			s.consume(len(s.buf))
			return s.garbage("more than 1 MiB of JSON came without a Content-Length header", quiet)
		}
		if err := s.fill(); err != nil {
			return s.ended(err, !quiet)
		}
	}
}

// answerUnframed consumes the n bytes of an unframed JSON value and
// answers it.
func (s *frameStream) answerUnframed(n int, quiet bool) error {
	value := s.buf[:n]
	id := idOf(value)
	s.consume(n)
	if !quiet {
		s.reply(id, jsonrpc2.ParseError, "quire lsp: the message has no Content-Length header (the language server protocol frames every message with one); it was skipped")
	}
	return nil
}

// jsonScanner finds the end of one JSON object or array fed to it in
// pieces. It tracks nesting and strings only: it finds where a value
// ends, not whether it is valid.
type jsonScanner struct {
	depth    int
	inString bool
	escaped  bool
}

// scan feeds p; it returns the offset just past the value's end in p.
func (sc *jsonScanner) scan(p []byte) (int, bool) {
	for i, c := range p {
		switch {
		case sc.inString:
			switch {
			case sc.escaped:
				sc.escaped = false
			case c == '\\':
				sc.escaped = true
			case c == '"':
				sc.inString = false
			}
		case c == '"':
			sc.inString = true
		case c == '{' || c == '[':
			sc.depth++
		case c == '}' || c == ']':
			sc.depth--
			if sc.depth <= 0 {
				return i + 1, true
			}
		}
	}
	return 0, false
}

// Write implements jsonrpc2.Stream: one frame, written in one call. A
// reply written, or given up, is paid to replies.
func (s *frameStream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	body, err := jsonrpc2.EncodeMessage(msg)
	if err != nil {
		return 0, fmt.Errorf("encode message: %w", err)
	}
	if s.replies != nil {
		if id, ok := responseID(msg, body); ok {
			defer s.replies.wrote(id)
		}
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	n, err := s.writeFrame(body)
	if err != nil {
		s.endReplies()
	}
	return n, err
}

// writeFrame writes body with its header in one call.
func (s *frameStream) writeFrame(body []byte) (int64, error) {
	frame := make([]byte, 0, len(body)+32)
	frame = append(frame, "Content-Length: "...)
	frame = strconv.AppendInt(frame, int64(len(body)), 10)
	frame = append(frame, "\r\n\r\n"...)
	frame = append(frame, body...)
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	n, err := s.conn.Write(frame)
	return int64(n), err
}

// Close implements jsonrpc2.Stream.
func (s *frameStream) Close() error { return s.conn.Close() }
