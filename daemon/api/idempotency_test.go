package api

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

// keyed is a Backend whose writes report the idempotency key their
// context carries.
type keyed struct {
	Backend
	got *[]string
}

func (k keyed) MemoryAppend(ctx context.Context, agent string, req AppendRequest) (WriteResponse, error) {
	*k.got = append(*k.got, IdempotencyKey(ctx))
	return WriteResponse{Path: "memory/x.md"}, nil
}

func (k keyed) WriteFile(ctx context.Context, agent, user, path, ifMatch string, content []byte) (WriteResponse, error) {
	*k.got = append(*k.got, IdempotencyKey(ctx))
	return WriteResponse{Path: path}, nil
}

// TestIdempotencyKeyHeader: the writes pass the Idempotency-Key header
// to the backend; a key that is too long, not printable ASCII, empty or
// sent twice is a 400 naming the header, before the backend is reached.
func TestIdempotencyKeyHeader(t *testing.T) {
	long := strings.Repeat("k", MaxIdempotencyKey)
	tests := []struct {
		name   string
		keys   []string
		want   int
		passed string // the key the backend saw
		msg    string // in the 400's message
	}{
		{"none", nil, 200, "", ""},
		{"uuid", []string{"7f1c2a9e-3b4d-4e5f-8a6b-1c2d3e4f5a6b"}, 200, "7f1c2a9e-3b4d-4e5f-8a6b-1c2d3e4f5a6b", ""},
		{"printable with spaces", []string{"order 42 / retry ~"}, 200, "order 42 / retry ~", ""},
		{"255 bytes", []string{long}, 200, long, ""},
		{"256 bytes", []string{long + "k"}, 400, "", "Idempotency-Key: 256 bytes; a key is at most 255 printable ASCII characters"},
		{"control", []string{"a\tb"}, 400, "", "Idempotency-Key: byte 2 is 0x09; a key is printable ASCII (space to ~) only"},
		{"not ASCII", []string{"clé"}, 400, "", "Idempotency-Key: byte 3 is 0xc3; a key is printable ASCII (space to ~) only"},
		{"empty", []string{""}, 400, "", "Idempotency-Key is empty; send a key of 1 to 255 printable ASCII characters, or no header"},
		{"twice", []string{"a", "b"}, 400, "", "Idempotency-Key: sent 2 times; send one key"},
	}
	for _, route := range []struct{ method, path, body string }{
		{"POST", "/v1/agents/bot/memory/append", `{"text":"hello"}`},
		{"PUT", "/v1/agents/bot/files/MEMORY.md", "# Memory\n"},
	} {
		for _, tt := range tests {
			t.Run(route.method+" "+tt.name, func(t *testing.T) {
				var got []string
				h := Handler(keyed{got: &got}, Options{})
				req := httptest.NewRequest(route.method, route.path, strings.NewReader(route.body))
				req.Header.Set("If-Match", "*")
				req.Header.Set("Content-Type", "text/markdown")
				for _, k := range tt.keys {
					req.Header.Add(IdempotencyKeyHeader, k)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != tt.want {
					t.Fatalf("%d %s, want %d", rec.Code, rec.Body, tt.want)
				}
				if tt.want != 200 {
					var eb ErrorBody
					if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil || eb.Error.Code != CodeBadRequest || eb.Error.Message != tt.msg {
						t.Errorf("answer %s, want bad_request %q", rec.Body, tt.msg)
					}
					if len(got) != 0 {
						t.Errorf("the backend was called with %q", got)
					}
					return
				}
				if len(got) != 1 || got[0] != tt.passed {
					t.Errorf("the backend saw keys %q, want [%q]", got, tt.passed)
				}
			})
		}
	}
}
