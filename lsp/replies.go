package lsp

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"
)

// replies counts the replies a session owes: a call is owed from when its
// handler starts until the stream has written its reply (jsonrpc2 writes
// it after the handler returns, where only the stream sees it). Once the
// stream can write no more (its input ended or a write failed, after
// which jsonrpc2 refuses every write), nothing is owed that can still be
// paid.
type replies struct {
	mu    sync.Mutex
	owed  map[jsonrpc2.ID]int
	n     int
	ended bool
	// paid is closed while nothing is owed or the stream has ended.
	paid chan struct{}
}

func newReplies() *replies {
	r := &replies{owed: map[jsonrpc2.ID]int{}, paid: make(chan struct{})}
	close(r.paid)
	return r
}

// owe records that the call id is owed a reply.
func (r *replies) owe(id jsonrpc2.ID) {
	if s, ok := id.StringValue(); ok {
		id = jsonrpc2.NewStringID(strings.Clone(s)) // it may borrow the frame
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == 0 && !r.ended {
		r.paid = make(chan struct{})
	}
	r.owed[id]++
	r.n++
}

// wrote records that the stream wrote (or tried and failed to write) the
// reply to id.
func (r *replies) wrote(id jsonrpc2.ID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.owed[id] == 0 {
		return // a reply the stream made itself, to a malformed message
	}
	if r.owed[id]--; r.owed[id] == 0 {
		delete(r.owed, id)
	}
	if r.n--; r.n == 0 && !r.ended {
		close(r.paid)
	}
}

// end records that the stream writes no more.
func (r *replies) end() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.ended && r.n > 0 {
		close(r.paid)
	}
	r.ended = true
}

// allPaid is closed once nothing is owed (or the stream has ended).
func (r *replies) allPaid() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.paid
}

// How jsonrpc2 starts the envelope of a call or notification, and of a
// response: the stream reads a response's id from its start, and decodes
// the whole message only when it starts otherwise.
const (
	requestPrefix  = `{"jsonrpc":"2.0","method":`
	responsePrefix = `{"jsonrpc":"2.0","id":`
)

// responseID returns the id of msg, encoded as body, when it is a
// response.
func responseID(msg jsonrpc2.Message, body []byte) (jsonrpc2.ID, bool) {
	switch m := msg.(type) {
	case *jsonrpc2.Response:
		return m.ID(), true
	case *jsonrpc2.Call, *jsonrpc2.Notification:
		return jsonrpc2.ID{}, false
	}
	if bytes.HasPrefix(body, []byte(requestPrefix)) {
		return jsonrpc2.ID{}, false
	}
	if rest, ok := bytes.CutPrefix(body, []byte(responsePrefix)); ok {
		if id, ok := leadingID(rest); ok {
			return id, true
		}
	}
	decoded, err := jsonrpc2.DecodeMessage(body)
	if resp, ok := decoded.(*jsonrpc2.Response); ok && err == nil {
		return resp.ID(), true
	}
	return jsonrpc2.ID{}, false
}

// leadingID reads the id at the start of b (a number, a string or null),
// without reading the rest.
func leadingID(b []byte) (jsonrpc2.ID, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return jsonrpc2.ID{}, false
	}
	switch v := tok.(type) {
	case nil:
		return jsonrpc2.ID{}, true
	case string:
		return jsonrpc2.NewStringID(v), true
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return jsonrpc2.NewNumberID(n), true
		}
	}
	return jsonrpc2.ID{}, false
}
