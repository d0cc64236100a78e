package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLineBytes bounds one message on stdio, as the SDK's transport does;
// a longer line is answered -32600 and skipped.
const MaxLineBytes = sdk.DefaultMaxLineLength

// versionNoBatches is the first protocol version without JSON-RPC
// batches (they were part of 2025-03-26 only).
const versionNoBatches = "2025-06-18"

// versionSessionless is the first protocol version whose requests may
// carry their version in _meta instead of an initialize (SEP-2575).
const versionSessionless = "2026-07-28"

// Serve runs one MCP session for id on r and w (stdio: newline-delimited
// JSON-RPC) until the client closes r or ctx is done.
//
// The SDK's transport ends the session at the first line it cannot
// take, so the lines pass a check first, and what fails it is answered
// here while the session goes on: a line that is not JSON with -32700
// (parse error); one that is not a JSON-RPC message, a batch (unless
// the session speaks 2025-03-26 or older, where the SDK answers it), a
// line over MaxLineBytes, or a request before initialize with -32600
// (invalid request).
func Serve(ctx context.Context, b Backend, id Identity, opts Options, r io.Reader, w io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv := NewServer(ctx, b, id, opts)
	out := &lockedWriter{w: w}
	lc := &lineCheck{out: out}
	srv.AddReceivingMiddleware(lc.recordVersion)
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(lc.copy(r, pw)) }()
	defer pr.Close() // a copy blocked writing stops
	err := srv.Run(ctx, &sdk.IOTransport{Reader: pr, Writer: nopCloser{out}})
	if ctx.Err() != nil || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// lockedWriter serializes whole writes: the SDK's lines and lineCheck's
// answers never interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// lineCheck passes the SDK the lines it can take and answers the others.
type lineCheck struct {
	out *lockedWriter

	mu       sync.Mutex
	version  string // the protocol version initialize negotiated
	initSent bool   // an initialize request went through
}

// recordVersion notes the protocol version a successful initialize
// negotiated: it decides whether batches are answered.
func (lc *lineCheck) recordVersion(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if r, ok := res.(*sdk.InitializeResult); ok && err == nil {
			lc.mu.Lock()
			lc.version = r.ProtocolVersion
			lc.mu.Unlock()
		}
		return res, err
	}
}

// copy reads r line by line until it ends and writes to sdk the lines
// that pass, each compact on a line of its own.
func (lc *lineCheck) copy(r io.Reader, sdk io.Writer) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, tooLong, err := readLine(br, MaxLineBytes)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		switch {
		case tooLong:
			lc.answer(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, fmt.Sprintf("line %d is over %d bytes: a message must be shorter", n, MaxLineBytes))
		case len(line) > 0:
			if fwd := lc.check(n, line); fwd != nil {
				if _, werr := sdk.Write(append(fwd, '\n')); werr != nil {
					return werr
				}
			}
		}
		if err != nil {
			return nil // end of input: the session ends
		}
	}
}

// readLine returns the next line of br without its end and surrounding
// white space; a line over max is skipped to its end and reported.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+2 { // room for "\r\n"
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSpace(line), tooLong, err
	}
}

// check returns line n as the SDK may take it, or nil after answering
// it.
func (lc *lineCheck) check(n int, line []byte) []byte {
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		lc.answer(jsonrpc.ID{}, jsonrpc.CodeParseError, fmt.Sprintf("parse error: line %d is not JSON (%v)", n, err))
		return nil
	}
	if line[0] == '[' {
		return lc.checkBatch(n, line)
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		lc.answer(idOf(line), jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: line %d is not a JSON-RPC 2.0 message (%v)", n, err))
		return nil
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return line
	}
	lc.mu.Lock()
	if req.Method == "initialize" {
		lc.initSent = true
	}
	early := !lc.initSent
	lc.mu.Unlock()
	if early {
		if e := beforeInitialize(req); e != nil {
			lc.answer(req.ID, e.Code, e.Message)
			return nil
		}
	}
	return line
}

// checkBatch passes a batch to the SDK when the session's protocol has
// batches and every message in it is one.
func (lc *lineCheck) checkBatch(n int, line []byte) []byte {
	lc.mu.Lock()
	version := lc.version
	lc.mu.Unlock()
	if version == "" || version >= versionNoBatches {
		speaks := "this session has not initialized yet"
		if version != "" {
			speaks = "this session speaks " + version
		}
		lc.answer(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: line %d is a JSON-RPC batch, which MCP has not had since %s (%s): send each message on a line of its own", n, versionNoBatches, speaks))
		return nil
	}
	var raws []json.RawMessage
	_ = json.Unmarshal(line, &raws)
	ids := map[any]bool{}
	for i, raw := range raws {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err == nil {
			if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
				if ids[req.ID.Raw()] {
					err = fmt.Errorf("id %v appears twice", req.ID.Raw())
				}
				ids[req.ID.Raw()] = true
			}
		}
		if err != nil {
			lc.answer(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: message %d of the batch on line %d is not a JSON-RPC 2.0 message (%v)", i+1, n, err))
			return nil
		}
	}
	if len(raws) == 0 {
		lc.answer(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: line %d is an empty batch", n))
		return nil
	}
	return line
}

// answer writes an error response for id (the zero ID is null).
func (lc *lineCheck) answer(id jsonrpc.ID, code int64, msg string) {
	_, _ = lc.out.Write(append(errorResponse(id, &jsonrpc.Error{Code: code, Message: msg}), '\n'))
}

// errorResponse is a JSON-RPC error response to id. The SDK's encoding
// leaves out a zero ID, where JSON-RPC wants "id": null for a request
// whose id could not be read.
func errorResponse(id jsonrpc.ID, e *jsonrpc.Error) []byte {
	data, err := json.Marshal(struct {
		JSONRPC string         `json:"jsonrpc"`
		ID      any            `json:"id"`
		Error   *jsonrpc.Error `json:"error"`
	}{"2.0", id.Raw(), e})
	if err != nil { // an error's message is a string: it always encodes
		return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}`)
	}
	return data
}

// idOf is the id of a message that is not valid JSON-RPC, when it has a
// usable one; else the zero ID (null).
func idOf(line []byte) jsonrpc.ID {
	var m struct {
		ID any `json:"id"`
	}
	if json.Unmarshal(line, &m) != nil {
		return jsonrpc.ID{}
	}
	id, err := jsonrpc.MakeID(m.ID)
	if err != nil {
		return jsonrpc.ID{}
	}
	return id
}

// methodsBeforeInitialize may come before initialize (the lifecycle of
// MCP 2025-06-18 and the SDK's own list).
var methodsBeforeInitialize = map[string]bool{
	"initialize": true, "ping": true, "logging/setLevel": true,
	"resources/subscribe": true, "resources/unsubscribe": true, "server/discover": true,
}

// beforeInitialize returns the error for req, a message that arrives
// before the session's initialize, or nil when it may come then: a
// notification, a method the lifecycle allows, or a request of the
// sessionless protocol (2026-07-28, its version in _meta).
func beforeInitialize(req *jsonrpc.Request) *jsonrpc.Error {
	if !req.IsCall() || methodsBeforeInitialize[req.Method] {
		return nil
	}
	var p struct {
		Meta map[string]any `json:"_meta"`
	}
	if len(req.Params) > 0 && json.Unmarshal(req.Params, &p) == nil {
		if v, ok := p.Meta[sdk.MetaKeyProtocolVersion].(string); ok && v >= versionSessionless {
			return nil
		}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
		Message: fmt.Sprintf("invalid request: %s before initialize: a session starts with initialize (then notifications/initialized)", req.Method)}
}
