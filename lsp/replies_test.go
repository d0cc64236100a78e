package lsp

import (
	"context"
	"errors"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

// TestRepliesArePaidByTheStream: a reply is owed until the stream writes
// it (numbers and strings as ids, encoded in full or taken apart by
// jsonrpc2); what the server sends unasked, and its answers to malformed
// messages, pay nothing; once the stream can write no more, nothing is
// awaited.
func TestRepliesArePaidByTheStream(t *testing.T) {
	paid := func(r *replies) bool {
		select {
		case <-r.allPaid():
			return true
		default:
			return false
		}
	}
	r := newReplies()
	s := newFrameStream(&scriptedConn{}, testLogger(), nil)
	s.replies = r
	if !paid(r) {
		t.Fatal("owed before any call")
	}
	r.owe(jsonrpc2.NewNumberID(2))
	r.owe(jsonrpc2.NewStringID("a"))
	ctx := context.Background()
	s.Write(ctx, jsonrpc2.NewNotification("window/logMessage", []byte(`{"message":"x"}`)))
	s.Write(ctx, jsonrpc2.NewCall(jsonrpc2.NewNumberID(2), "workspace/codeLens/refresh", nil))
	s.reply(jsonrpc2.NewStringID("a"), jsonrpc2.InvalidRequest, "malformed")
	s.Write(ctx, jsonrpc2.NewResponse(jsonrpc2.NewNumberID(2), []byte(`{"x":1}`), nil))
	if paid(r) {
		t.Fatal("paid before the reply to \"a\" was written")
	}
	s.Write(ctx, jsonrpc2.NewResponse(jsonrpc2.NewStringID("a"), nil, errors.New("no")))
	if !paid(r) {
		t.Fatal("owed after both replies were written")
	}

	r.owe(jsonrpc2.NewNumberID(3))
	r.end()
	if !paid(r) {
		t.Fatal("awaited after the stream ended")
	}
}

// TestResponseID: the id of a response as jsonrpc2 encodes it, read from
// its start; anything else is decoded whole.
func TestResponseID(t *testing.T) {
	for _, tc := range []struct {
		body     string
		id       jsonrpc2.ID
		response bool
	}{
		{`{"jsonrpc":"2.0","id":7,"result":{"a":[1,2]}}`, jsonrpc2.NewNumberID(7), true},
		{`{"jsonrpc":"2.0","id":"a\"b","error":{"code":-32601,"message":"no"}}`, jsonrpc2.NewStringID(`a"b`), true},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"no"}}`, jsonrpc2.ID{}, true},
		{`{"jsonrpc":"2.0","method":"workspace/codeLens/refresh","id":3}`, jsonrpc2.ID{}, false},
		{`{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{}}`, jsonrpc2.ID{}, false},
		{`{"result":null,"id":5,"jsonrpc":"2.0"}`, jsonrpc2.NewNumberID(5), true},
	} {
		id, ok := responseID(nil, []byte(tc.body))
		if id != tc.id || ok != tc.response {
			t.Errorf("%s: %v %v, want %v %v", tc.body, id, ok, tc.id, tc.response)
		}
	}
}
