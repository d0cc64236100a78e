package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
)

// frame is a well-formed LSP frame around body.
func frame(body string) string {
	return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
}

// wireReply is a response as it came over the wire.
type wireReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Method string `json:"method"` // set on the server's own requests and notifications
}

// rawSession is a server driven with raw bytes, as a misbehaving client
// would send them.
type rawSession struct {
	t       testing.TB
	conn    net.Conn
	replies chan wireReply
	done    chan error
}

func startRaw(t testing.TB, root string) *rawSession {
	t.Helper()
	sc, cc := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	r := &rawSession{t: t, conn: cc, replies: make(chan wireReply, 100), done: make(chan error, 1)}
	go func() { r.done <- Serve(ctx, sc, Options{Root: root, Logger: testLogger(), Debounce: time.Hour}) }()
	go r.readLoop()
	t.Cleanup(func() {
		cancel()
		cc.Close()
		select {
		case <-r.done:
		case <-time.After(5 * time.Second):
			t.Error("server did not stop")
		}
	})
	return r
}

// readLoop reads the server's frames with a strict reader of its own.
func (r *rawSession) readLoop() {
	br := &frameReader{r: r.conn}
	for {
		body, err := br.next()
		if err != nil {
			close(r.replies)
			return
		}
		var rep wireReply
		if err := json.Unmarshal(body, &rep); err != nil {
			// Not JSON: the test that waits for a reply sees this id.
			rep = wireReply{ID: json.RawMessage(fmt.Sprintf("%q", "not JSON: "+string(body)))}
		}
		if rep.Method != "" {
			continue // a notification or request of the server's
		}
		r.replies <- rep
	}
}

func (r *rawSession) send(raw string) {
	r.t.Helper()
	if _, err := io.WriteString(r.conn, raw); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

// next waits for the next reply.
func (r *rawSession) next(what string) wireReply {
	r.t.Helper()
	select {
	case rep, ok := <-r.replies:
		if !ok {
			r.t.Fatalf("%s: the server closed the stream", what)
		}
		return rep
	case <-time.After(5 * time.Second):
		r.t.Fatalf("%s: no reply", what)
	}
	return wireReply{}
}

// frameReader is the strict client-side reader of the tests.
type frameReader struct {
	r   io.Reader
	buf []byte
}

func (f *frameReader) next() ([]byte, error) {
	for {
		if i := bytes.Index(f.buf, []byte("\r\n\r\n")); i >= 0 {
			var n int
			if _, err := fmt.Sscanf(string(f.buf[:i]), "Content-Length: %d", &n); err != nil {
				return nil, fmt.Errorf("bad header %q", f.buf[:i])
			}
			if len(f.buf) >= i+4+n {
				body := append([]byte(nil), f.buf[i+4:i+4+n]...)
				f.buf = f.buf[i+4+n:]
				return body, nil
			}
		}
		chunk := make([]byte, 4096)
		n, err := f.r.Read(chunk)
		f.buf = append(f.buf, chunk[:n]...)
		if err != nil {
			return nil, err
		}
	}
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`

// A malformed frame is answered (-32700 where nothing can be read, -32600
// for JSON that is not a message) and the session goes on: the request
// sent after it is answered.
func TestMalformedFramesAreAnsweredAndServingGoesOn(t *testing.T) {
	symbols := `{"jsonrpc":"2.0","id":99,"method":"textDocument/documentSymbol","params":{"textDocument":{"uri":"file:///x/SOUL.md"}}}`
	for _, tc := range []struct {
		name string
		send string
		code int
		id   string // the id the answer carries
		// later: the frame cannot be answered before more input comes
		// (the rest of a body, the end of a line): the next request is
		// sent with it.
		later bool
	}{
		{name: "cut-off JSON body", send: frame(`{"jsonrpc":"2.0","id":5,"method":"textDocument/hov`), code: -32700, id: "null"},
		{name: "cut-off body ending like a header", send: frame(`{"jsonrpc":"2.0","id":5,"method":"textDoc`), code: -32700, id: "null"},
		{name: "body shorter than announced", send: "Content-Length: 400\r\n\r\n" + `{"jsonrpc":"2.0","id":5,"meth`, code: -32700, id: "null", later: true},
		{name: "plain text line", send: "hello there\r\n", code: -32700, id: "null"},
		{name: "plain text without a line break", send: "hello", code: -32700, id: "null", later: true},
		{name: "JSON without a header", send: `{"jsonrpc":"2.0","id":7,"method":"textDocument/hover","params":{}}`, code: -32700, id: "7"},
		{name: "JSON without a header, on lines", send: "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": \"x\"\n}\n", code: -32700, id: `"x"`},
		{name: "header without Content-Length", send: "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + `{"jsonrpc":"2.0","id":8,"method":"shutdown"}`, code: -32700, id: "null"},
		{name: "Content-Length not a number", send: "Content-Length: lots\r\n\r\n{}", code: -32700, id: "null"},
		{name: "Content-Length zero", send: "Content-Length: 0\r\n\r\n", code: -32700, id: "null"},
		{name: "body shorter than Content-Length says", send: "Content-Length: 5\r\n\r\n" + `{"jsonrpc":"2.0"}`, code: -32700, id: "null"},
		{name: "not JSON-RPC", send: frame(`{"id":4,"method":"textDocument/hover"}`), code: -32600, id: "4"},
		{name: "a batch", send: frame(`[{"jsonrpc":"2.0","id":4,"method":"shutdown"}]`), code: -32600, id: "null"},
		{name: "an empty batch", send: frame(`[]`), code: -32600, id: "null"},
		{name: "a JSON string", send: frame(`"hello"`), code: -32600, id: "null"},
		{name: "binary", send: "\x00\x01\x02\xff\r\n", code: -32700, id: "null"},
		{name: "header line with a colon first", send: ": x\r\n\r\n", code: -32700, id: "null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := startRaw(t, t.TempDir())
			r.send(frame(initializeBody))
			if rep := r.next("initialize"); rep.Error != nil {
				t.Fatalf("initialize: %+v", rep.Error)
			}
			if tc.later {
				r.send(tc.send + frame(symbols))
			} else {
				r.send(tc.send)
			}
			rep := r.next("the malformed frame")
			if rep.Error == nil || rep.Error.Code != tc.code || string(rep.ID) != tc.id {
				t.Fatalf("answer %s %+v, want code %d with id %s", rep.ID, rep.Error, tc.code, tc.id)
			}
			if !strings.Contains(rep.Error.Message, "quire lsp:") {
				t.Errorf("message %q does not say who answers", rep.Error.Message)
			}
			if !tc.later {
				r.send(frame(symbols))
			}
			rep = r.next("the request after it")
			if string(rep.ID) != "99" || rep.Error != nil {
				t.Fatalf("after %s: reply %s %+v %s, want the answer to request 99", tc.name, rep.ID, rep.Error, rep.Result)
			}
		})
	}
}

// A body announced as larger than the limit is read past without being
// kept, and answered; the next frame is read.
func TestOversizedBodyIsSkipped(t *testing.T) {
	const limit = 1 << 16
	over := `{"jsonrpc":"2.0","id":3,"method":"x","params":"` + strings.Repeat("x", limit) + `"}`
	conn := &memConn{in: bytes.NewReader([]byte(frame(over) + frame(`{"jsonrpc":"2.0","id":4,"method":"shutdown"}`)))}
	s := newFrameStream(conn, testLogger(), nil)
	s.maxBody = limit
	msg, _, err := s.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := msg.(interface{ ID() jsonrpc2.ID }); !ok || fmt.Sprint(c.ID()) != "4" {
		t.Errorf("read %#v, want the request after the oversized one", msg)
	}
	if len(s.buf) > 4*readChunk {
		t.Errorf("the reader kept %d bytes of the oversized body", len(s.buf))
	}
	body, err := (&frameReader{r: &conn.out}).next()
	if err != nil {
		t.Fatal(err)
	}
	var rep wireReply
	if err := json.Unmarshal(body, &rep); err != nil || rep.Error == nil || rep.Error.Code != -32600 || !strings.Contains(rep.Error.Message, "over the limit") {
		t.Errorf("answer %s, want -32600 over the limit", body)
	}
}

// Requests with wrong or missing params are -32602, unknown methods
// -32601, a preview with a bad argument -32602.
func TestDispatchErrorCodes(t *testing.T) {
	root := writeFiles(t, map[string]string{"agent.yaml": "name: a\n", "SOUL.md": "# Soul\n"})
	for _, tc := range []struct {
		name, method, params string
		code                 int
	}{
		{"wrong params", "textDocument/hover", `{"textDocument":5}`, -32602},
		{"params of the wrong kind", "textDocument/hover", `[1,2]`, -32602},
		{"missing params", "textDocument/hover", ``, -32602},
		{"null params", "textDocument/codeLens", `null`, -32602},
		{"missing params of executeCommand", "workspace/executeCommand", ``, -32602},
		{"unknown method", "quire/unknown", `{}`, -32601},
		{"unknown LSP method", "textDocument/rename", `{"textDocument":{"uri":"file:///x.md"},"position":{"line":0,"character":0},"newName":"x"}`, -32601},
		{"preview with a bad time", "workspace/executeCommand", `{"command":"quire.previewPrompt","arguments":[{"now":"yesterday"}]}`, -32602},
		{"preview with a bad session", "workspace/executeCommand", `{"command":"quire.previewPrompt","arguments":[{"session":"weekly"}]}`, -32602},
		{"preview with a bad channel", "workspace/executeCommand", `{"command":"quire.previewPrompt","arguments":[{"channel":"radio"}]}`, -32602},
		{"preview of an unknown agent", "workspace/executeCommand", `{"command":"quire.previewPrompt","arguments":[{"agent":"nobody"}]}`, -32602},
		{"preview with a number", "workspace/executeCommand", `{"command":"quire.previewPrompt","arguments":[5]}`, -32602},
		{"preview with a room outside a group", "workspace/executeCommand", `{"command":"quire.previewPrompt","arguments":[{"room":"r1"}]}`, -32602},
		{"unknown command", "workspace/executeCommand", `{"command":"quire.nothing"}`, -32602},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := startRaw(t, root)
			r.send(frame(initializeBody))
			r.next("initialize")
			body := `{"jsonrpc":"2.0","id":2,"method":"` + tc.method + `"`
			if tc.params != "" {
				body += `,"params":` + tc.params
			}
			r.send(frame(body + "}"))
			rep := r.next(tc.method)
			if rep.Error == nil || rep.Error.Code != tc.code {
				t.Fatalf("reply %+v %s, want code %d", rep.Error, rep.Result, tc.code)
			}
			r.send(frame(`{"jsonrpc":"2.0","id":3,"method":"shutdown"}`))
			if rep := r.next("shutdown"); string(rep.ID) != "3" || rep.Error != nil {
				t.Fatalf("shutdown: %s %+v", rep.ID, rep.Error)
			}
		})
	}
}

// memConn is a stream over fixed input that records what is written.
type memConn struct {
	in  *bytes.Reader
	out bytes.Buffer
}

func (m *memConn) Read(p []byte) (int, error) {
	// Small reads, so that frames arrive in pieces.
	return m.in.Read(p[:min(len(p), 7+m.in.Len()%13)])
}
func (m *memConn) Write(p []byte) (int, error) { return m.out.Write(p) }
func (m *memConn) Close() error                { return nil }

// FuzzFraming feeds arbitrary bytes to the framing reader: it never
// panics, always reaches the end of the input, writes only well-formed
// frames of JSON, and a well-formed request after the input, past a blank
// line, is read.
func FuzzFraming(f *testing.F) {
	valid := frame(`{"jsonrpc":"2.0","id":424242,"method":"textDocument/hover","params":{}}`)
	for _, seed := range []string{
		"", "hello", "hello there\r\n", frame(`{"jsonrpc":"2.0","id":1,"method":"x"}`),
		frame(`{"jsonrpc":"2.0","id":5,"method":"textDocument/hov`), "Content-Length: 400\r\n\r\n{\"a\":",
		`{"jsonrpc":"2.0","id":7}`, "Content-Type: x\r\n\r\n{}", "Content-Length: -1\r\n\r\n", frame("[]"),
		"Content-Length: 99999999999\r\n\r\n", "{\"a\":\"", "\x00\xff", "content-length: 2\n\n{}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		conn := &memConn{in: bytes.NewReader(append(append(append([]byte(nil), input...), "\r\n\r\n"...), valid...))}
		s := newFrameStream(conn, testLogger(), nil)
		found := false
		for range 10000 {
			msg, _, err := s.Read(context.Background())
			if err != nil {
				break
			}
			if c, ok := msg.(interface{ ID() jsonrpc2.ID }); ok {
				if n, _ := c.ID().Number(); n == 424242 {
					found = true
				}
			}
		}
		if conn.in.Len() > 0 {
			t.Fatalf("the reader stopped with %d bytes unread", conn.in.Len())
		}
		if !found {
			t.Errorf("the well-formed request after the input was not read")
		}
		out := &frameReader{r: bytes.NewReader(conn.out.Bytes())}
		for {
			body, err := out.next()
			if err == io.EOF && len(out.buf) == 0 {
				break
			}
			if err != nil {
				t.Fatalf("the reader wrote something that is not a frame: %v (%q)", err, out.buf)
			}
			var rep wireReply
			if err := json.Unmarshal(body, &rep); err != nil || rep.Error == nil {
				t.Fatalf("the reader wrote %q, want an error response", body)
			}
		}
	})
}

// FuzzDispatch sends requests with arbitrary methods and params to a
// running server: each is answered (a result, or an error with a JSON-RPC
// code), and the server goes on answering.
func FuzzDispatch(f *testing.F) {
	for _, seed := range []struct{ method, params string }{
		{"textDocument/hover", `{"textDocument":5}`},
		{"textDocument/hover", `{"textDocument":{"uri":"file:///w/SOUL.md"},"position":{"line":99,"character":-1}}`},
		{"workspace/executeCommand", `{"command":"quire.previewPrompt","arguments":[{"now":"x"}]}`},
		{"workspace/executeCommand", `{"command":"quire.previewPrompt","arguments":["a","b","c","d","e"]}`},
		{"textDocument/codeLens", `null`},
		{"textDocument/completion", `{"textDocument":{"uri":"file:///w/agent.yaml"},"position":{"line":0,"character":3}}`},
		{"quire/unknown", `{}`},
		{"textDocument/documentSymbol", `[]`},
	} {
		f.Add(seed.method, []byte(seed.params))
	}
	root := writeFilesTB(f, map[string]string{"agent.yaml": "name: a\n", "SOUL.md": "# Soul\n"})
	r := startRaw(f, root)
	r.send(frame(initializeBody))
	r.next("initialize")
	id := int64(10)
	f.Fuzz(func(t *testing.T, method string, params []byte) {
		switch method {
		case "initialize", "shutdown", "exit":
			return // they end or restart the session
		}
		m, _ := json.Marshal(method)
		p := bytes.TrimSpace(params)
		if !json.Valid(p) {
			p = []byte("null")
		}
		id++
		if _, err := io.WriteString(r.conn, frame(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%s,"params":%s}`, id, m, p))); err != nil {
			t.Fatalf("write: %v", err)
		}
		var rep wireReply
		select {
		case rep = <-r.replies:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s %s: no answer", method, p)
		}
		if string(rep.ID) != fmt.Sprint(id) {
			t.Fatalf("%s %s: answered id %s, want %d (%+v)", method, p, rep.ID, id, rep.Error)
		}
		if rep.Error != nil {
			switch rep.Error.Code {
			case -32700, -32600, -32601, -32602, -32603, -32002, -32800, -32801:
			default:
				t.Errorf("%s %s: error code %d (%s)", method, p, rep.Error.Code, rep.Error.Message)
			}
			if rep.Error.Code == -32603 && strings.Contains(rep.Error.Message, "panic") {
				t.Errorf("%s %s: %s", method, p, rep.Error.Message)
			}
		}
	})
}

// A client whose editor has a Markdown outline of its own (VS Code) says
// so with initializationOptions {"outline": false}: the server then offers
// no document symbols or folding ranges, so headings are not listed twice.
func TestOutlineCanBeLeftToTheEditor(t *testing.T) {
	for _, tc := range []struct {
		name, options string
		outline       bool
	}{
		{"no options", ``, true},
		{"outline false", `,"initializationOptions":{"outline":false}`, false},
		{"outline true", `,"initializationOptions":{"outline":true}`, true},
		{"options of another kind", `,"initializationOptions":"x"`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := startRaw(t, t.TempDir())
			r.send(frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}` + tc.options + `}}`))
			rep := r.next("initialize")
			if rep.Error != nil {
				t.Fatal(rep.Error)
			}
			var res struct {
				Capabilities map[string]json.RawMessage `json:"capabilities"`
			}
			if err := json.Unmarshal(rep.Result, &res); err != nil {
				t.Fatal(err)
			}
			_, symbols := res.Capabilities["documentSymbolProvider"]
			_, folding := res.Capabilities["foldingRangeProvider"]
			if symbols != tc.outline || folding != tc.outline {
				t.Errorf("documentSymbolProvider %v, foldingRangeProvider %v, want %v: %s", symbols, folding, tc.outline, rep.Result)
			}
			if _, ok := res.Capabilities["hoverProvider"]; !ok {
				t.Errorf("no hover: %s", rep.Result)
			}
		})
	}
}

// An initialize whose params do not decode is -32602 and does not start
// the session: a good initialize after it does, and requests are answered.
func TestBadInitializeCanBeRetried(t *testing.T) {
	r := startRaw(t, t.TempDir())
	r.send(frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":5}}`))
	if rep := r.next("the bad initialize"); rep.Error == nil || rep.Error.Code != -32602 {
		t.Fatalf("bad initialize: %+v, want -32602", rep.Error)
	}
	r.send(frame(`{"jsonrpc":"2.0","id":2,"method":"textDocument/documentSymbol","params":{"textDocument":{"uri":"file:///x/SOUL.md"}}}`))
	if rep := r.next("a request before initialize"); rep.Error == nil || rep.Error.Code != -32002 {
		t.Fatalf("request before a good initialize: %+v, want -32002 (not initialized)", rep.Error)
	}
	r.send(frame(`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"capabilities":{}}}`))
	if rep := r.next("the good initialize"); rep.Error != nil {
		t.Fatalf("good initialize: %+v", rep.Error)
	}
	r.send(frame(`{"jsonrpc":"2.0","id":4,"method":"textDocument/documentSymbol","params":{"textDocument":{"uri":"file:///x/SOUL.md"}}}`))
	if rep := r.next("a request after initialize"); rep.Error != nil || string(rep.ID) != "4" {
		t.Fatalf("request after initialize: %s %+v", rep.ID, rep.Error)
	}
}

// scriptedConn is a client that sends in and ends its input; what the
// server writes collects in out.
type scriptedConn struct {
	in  io.Reader
	mu  sync.Mutex
	out bytes.Buffer
}

func (c *scriptedConn) Read(p []byte) (int, error) { return c.in.Read(p) }
func (c *scriptedConn) Close() error               { return nil }
func (c *scriptedConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.Write(p)
}

// A client that writes its last request and ends its input still gets
// the reply, however long jsonrpc2 takes from the handler's return to
// writing it: here the outline of a document of 20 000 headings, some
// megabytes to encode, which used to outlast the 20 ms the session
// waited after its handlers returned.
func TestReplyAfterTheInputEnds(t *testing.T) {
	root := t.TempDir()
	var doc strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&doc, "# Heading %d\n", i)
	}
	text, _ := json.Marshal(doc.String())
	uri := "file://" + filepath.ToSlash(filepath.Join(root, "SOUL.md"))
	var in strings.Builder
	in.WriteString(frame(initializeBody))
	in.WriteString(frame(`{"jsonrpc":"2.0","method":"initialized","params":{}}`))
	in.WriteString(frame(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"` + uri + `","languageId":"markdown","version":1,"text":` + string(text) + `}}}`))
	in.WriteString(frame(`{"jsonrpc":"2.0","id":2,"method":"textDocument/documentSymbol","params":{"textDocument":{"uri":"` + uri + `"}}}`))
	conn := &scriptedConn{in: strings.NewReader(in.String())}
	if err := Serve(context.Background(), conn, Options{Root: root, Logger: testLogger(), Debounce: time.Hour}); !errors.Is(err, ErrExitWithoutShutdown) {
		t.Fatalf("Serve = %v, want ErrExitWithoutShutdown", err)
	}
	fr := &frameReader{r: bytes.NewReader(conn.out.Bytes())}
	for {
		body, err := fr.next()
		if err != nil {
			t.Fatalf("no reply to the outline request: %v", err)
		}
		// The outline (not decoded whole: it is large).
		if n := bytes.Count(body, []byte(`"name":"Heading `)); n > 0 {
			if n != 20000 || !bytes.HasPrefix(body, []byte(`{"jsonrpc":"2.0","id":2,`)) {
				t.Fatalf("outline of %d headings, want 20000: %.100s…", n, body)
			}
			return
		}
	}
}
