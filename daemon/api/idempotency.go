package api

import (
	"context"
	"net/http"
)

// IdempotencyKeyHeader is the request header that names a write: a
// retry with the same key (on any daemon, after any restart) is never
// applied twice and is answered with the first write's commit.
const IdempotencyKeyHeader = "Idempotency-Key"

// MaxIdempotencyKey is the longest idempotency key, in bytes.
const MaxIdempotencyKey = 255

// CheckIdempotencyKey refuses a key that is longer than
// MaxIdempotencyKey or holds anything but printable ASCII; field names
// where the key came from (the header, or an MCP tool's argument).
func CheckIdempotencyKey(field, key string) error {
	if len(key) > MaxIdempotencyKey {
		return Errorf(CodeBadRequest, "%s: %d bytes; a key is at most %d printable ASCII characters", field, len(key), MaxIdempotencyKey)
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c > 0x7e {
			return Errorf(CodeBadRequest, "%s: byte %d is %#02x; a key is printable ASCII (space to ~) only", field, i+1, c)
		}
	}
	return nil
}

type idempotencyKey struct{}

// WithIdempotencyKey returns ctx carrying a write's idempotency key
// ("" for none): the handlers put the header there, the MCP tools their
// argument, and the backend's writes and the client read it back.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	if key == "" {
		return ctx
	}
	return context.WithValue(ctx, idempotencyKey{}, key)
}

// IdempotencyKey is the write's idempotency key ctx carries, "" for none.
func IdempotencyKey(ctx context.Context) string {
	k, _ := ctx.Value(idempotencyKey{}).(string)
	return k
}

// idempotent returns r's context with the Idempotency-Key header's key,
// or the header's refusal.
func idempotent(r *http.Request) (context.Context, error) {
	vs := r.Header.Values(IdempotencyKeyHeader)
	if len(vs) == 0 {
		return r.Context(), nil
	}
	if len(vs) > 1 {
		return nil, Errorf(CodeBadRequest, "%s: sent %d times; send one key", IdempotencyKeyHeader, len(vs))
	}
	if vs[0] == "" {
		return nil, Errorf(CodeBadRequest, "%s is empty; send a key of 1 to %d printable ASCII characters, or no header", IdempotencyKeyHeader, MaxIdempotencyKey)
	}
	if err := CheckIdempotencyKey(IdempotencyKeyHeader, vs[0]); err != nil {
		return nil, err
	}
	return WithIdempotencyKey(r.Context(), vs[0]), nil
}
