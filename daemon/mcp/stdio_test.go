package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// stdioSession is Serve on pipes, as `quire mcp` runs it.
type stdioSession struct {
	in    *io.PipeWriter
	lines chan string
	done  chan error
}

func startStdio(t *testing.T, files map[string]string, user string) *stdioSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &stdioSession{in: inW, lines: make(chan string, 64), done: make(chan error, 1)}
	go func() {
		s.done <- Serve(context.Background(), &fakeBackend{files: files}, Identity{Agent: "alpha", User: user}, Options{}, inR, outW)
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			t.Error("Serve did not end within 10 s of stdin's end")
		}
	})
	return s
}

func (s *stdioSession) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		t.Fatalf("write %.80s: %v", line, err)
	}
}

// next reads the next answer.
func (s *stdioSession) next(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-s.lines:
		if !ok {
			t.Fatal("the session ended")
		}
		return l
	case <-time.After(10 * time.Second):
		t.Fatal("no answer within 10 s")
	}
	return ""
}

type rpcAnswer struct {
	ID     any             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func decodeAnswer(t *testing.T, line string) rpcAnswer {
	t.Helper()
	var a rpcAnswer
	if err := json.Unmarshal([]byte(line), &a); err != nil {
		t.Fatalf("answer %q: %v", line, err)
	}
	return a
}

func initLine(id int, version string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`, id, version)
}

// TestStdioAnswersBadLinesAndGoesOn: every line the SDK's transport
// would end the session on is answered with its JSON-RPC code, and the
// session goes on to answer what follows; errors of prompts/get,
// resources/read and requests before initialize carry proper codes.
func TestStdioAnswersBadLinesAndGoesOn(t *testing.T) {
	s := startStdio(t, map[string]string{"MEMORY.md": "# Memory\n"}, "alice")
	steps := []struct {
		name string
		send string
		id   any    // the answer's id (float64 for numbers, nil for null)
		code int64  // 0: a result
		has  string // in the error's message or the result
	}{
		{"not JSON", `this is not json`, nil, -32700, "line 1 is not JSON"},
		{"truncated JSON", `{"jsonrpc":"2.0","id":3,"method":`, nil, -32700, "line 2 is not JSON"},
		{"a request before initialize", `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, 7.0, -32600, "tools/list before initialize"},
		{"a batch before initialize", `[{"jsonrpc":"2.0","id":8,"method":"ping"}]`, nil, -32600, "batch"},
		{"ping before initialize", `{"jsonrpc":"2.0","id":9,"method":"ping"}`, 9.0, 0, "{}"},
		{"initialize", initLine(1, "2025-06-18"), 1.0, 0, `"protocolVersion":"2025-06-18"`},
		{"a batch in 2025-06-18", `[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"ping"}]`, nil, -32600, "this session speaks 2025-06-18"},
		{"JSON-RPC 1.0", `{"jsonrpc":"1.0","id":4,"method":"ping"}`, 4.0, -32600, "not a JSON-RPC 2.0 message"},
		{"neither request nor response", `{"jsonrpc":"2.0","params":{}}`, nil, -32600, "not a JSON-RPC 2.0 message"},
		{"not an object", `42`, nil, -32600, "not a JSON-RPC 2.0 message"},
		{"a line over the limit", `{"jsonrpc":"2.0","id":6,"method":"ping","params":{"x":"` + strings.Repeat("x", MaxLineBytes) + `"}}`, nil, -32600, "over 16777216 bytes"},
		{"a bad prompt argument", `{"jsonrpc":"2.0","id":10,"method":"prompts/get","params":{"name":"system_prompt","arguments":{"session":"weekly"}}}`, 10.0, -32602, `session "weekly" is unknown`},
		{"an unknown prompt", `{"jsonrpc":"2.0","id":11,"method":"prompts/get","params":{"name":"nosuch"}}`, 11.0, -32602, "nosuch"},
		{"another user's prompt", `{"jsonrpc":"2.0","id":12,"method":"prompts/get","params":{"name":"system_prompt","arguments":{"user":"bob"}}}`, 12.0, -32602, `cannot assemble user "bob"'s prompt`},
		{"a missing resource", `{"jsonrpc":"2.0","id":13,"method":"resources/read","params":{"uri":"quire://alpha/nope.md"}}`, 13.0, -32002, "nope.md"},
		{"another agent's resource", `{"jsonrpc":"2.0","id":14,"method":"resources/read","params":{"uri":"quire://beta/SOUL.md"}}`, 14.0, -32002, "quire://beta/SOUL.md"},
		{"another user's resource", `{"jsonrpc":"2.0","id":15,"method":"resources/read","params":{"uri":"quire://alpha/users/bob/USER.md"}}`, 15.0, -32602, "never by their users/ path"},
		{"an unknown method", `{"jsonrpc":"2.0","id":16,"method":"nosuch"}`, 16.0, -32601, "nosuch"},
		{"null for optional arguments", `{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"memory_get","arguments":{"path":"MEMORY.md","scope":"agent","from":null,"lines":null}}}`, 17.0, 0, `\"text\":\"# Memory\\n\"`},
		{"still serving", `{"jsonrpc":"2.0","id":18,"method":"ping"}`, 18.0, 0, "{}"},
	}
	for _, st := range steps {
		s.send(t, st.send)
		line := s.next(t)
		a := decodeAnswer(t, line)
		if a.ID != st.id {
			t.Errorf("%s: answer id %v, want %v: %s", st.name, a.ID, st.id, line)
		}
		switch {
		case st.code == 0 && (a.Error != nil || !strings.Contains(string(a.Result), st.has)):
			t.Errorf("%s: %s, want a result holding %s", st.name, line, st.has)
		case st.code != 0 && (a.Error == nil || a.Error.Code != st.code || !strings.Contains(a.Error.Message, st.has)):
			t.Errorf("%s: %.300s, want error %d saying %q", st.name, line, st.code, st.has)
		case a.Error != nil && (strings.Contains(a.Error.Message, "bad_request:") || strings.Contains(a.Error.Message, "<invalid reflect.Value>")):
			t.Errorf("%s: message %q", st.name, a.Error.Message)
		}
		if strings.Contains(st.name, "initialize") && st.code == 0 {
			s.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		}
	}
}

// TestStdioBatchesAndNotFoundByVersion: what the protocol version the
// session negotiated decides: a batch is answered (2025-03-26) or
// refused, a missing resource is -32002 (up to 2025-11-25) or -32602
// (2026-07-28, SEP-2164).
func TestStdioBatchesAndNotFoundByVersion(t *testing.T) {
	for _, c := range []struct {
		version  string
		batches  bool
		notFound int64
	}{
		{"2025-03-26", true, -32002},
		{"2025-06-18", false, -32002},
		{"2025-11-25", false, -32002},
		{"2026-07-28", false, -32002}, // initialize negotiates 2025-11-25
	} {
		t.Run(c.version, func(t *testing.T) {
			s := startStdio(t, nil, "")
			s.send(t, initLine(1, c.version))
			if a := decodeAnswer(t, s.next(t)); a.Error != nil || !strings.Contains(string(a.Result), `"protocolVersion":"20`) {
				t.Fatalf("initialize %s: %+v %s", c.version, a.Error, a.Result)
			}
			s.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			s.send(t, `[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"ping"}]`)
			line := s.next(t)
			if answered := strings.HasPrefix(line, "["); answered != c.batches {
				t.Errorf("batch: %s, want answered %v", line, c.batches)
			}
			if !c.batches && decodeAnswer(t, line).Error.Code != -32600 {
				t.Errorf("batch: %s, want -32600", line)
			}
			s.send(t, `{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"quire://alpha/nope.md"}}`)
			if a := decodeAnswer(t, s.next(t)); a.Error == nil || a.Error.Code != c.notFound || !strings.Contains(string(a.Error.Data), `"uri":"quire://alpha/nope.md"`) {
				t.Errorf("missing resource: %+v, want %d with the uri", a.Error, c.notFound)
			}
		})
	}
}
