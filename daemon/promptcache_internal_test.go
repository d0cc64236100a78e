package daemon

import (
	"fmt"
	"strings"
	"testing"

	"github.com/quirehq/quire/daemon/api"
)

// TestPromptCacheBoundedByBytes: distinct requests cannot grow a
// deployment's prompt cache past its byte bound, and an answer too large
// to be worth keeping is not kept.
func TestPromptCacheBoundedByBytes(t *testing.T) {
	var c promptCache
	big := make([]byte, 3<<20)
	c.keep("huge", promptEntry{encoded: big})
	if c.lookup([]byte("huge")).encoded != nil || c.bytes != 0 {
		t.Fatalf("a 3 MB answer was cached (%d bytes held)", c.bytes)
	}
	answer := []byte(strings.Repeat("x", 200<<10))
	for i := range 1000 {
		c.keep(fmt.Sprintf("req-%d", i), promptEntry{encoded: answer})
		if c.bytes > maxPromptCacheBytes {
			t.Fatalf("after %d answers the cache holds %d bytes, bound %d", i+1, c.bytes, maxPromptCacheBytes)
		}
	}
	if c.lookup([]byte("req-999")).encoded == nil {
		t.Error("the newest answer is not cached")
	}
	held := 0
	for k, e := range c.entries {
		held += len(k) + len(e.encoded)
	}
	if held != c.bytes {
		t.Errorf("bytes %d, but the cache holds %d", c.bytes, held)
	}
	c.keep("req-999", promptEntry{encoded: answer}) // a repeat does not count twice
	if held != c.bytes {
		t.Errorf("after a repeat bytes %d, want %d", c.bytes, held)
	}
}

// TestPromptCacheForms: an entry keeps the encoded and the typed answer
// side by side, each counted, and a typed answer too large to keep with
// the encoded one leaves the entry as it was.
func TestPromptCacheForms(t *testing.T) {
	var c promptCache
	enc := []byte(`{"prompt":"hello"}` + "\n")
	c.keep("k", promptEntry{encoded: enc})
	c.keep("k", promptEntry{typed: &api.PromptResponse{Prompt: "hello"}})
	e := c.lookup([]byte("k"))
	if string(e.encoded) != string(enc) || e.typed == nil || e.typed.Prompt != "hello" {
		t.Fatalf("entry %+v, want both forms", e)
	}
	if want := len("k") + len(enc) + len("hello"); c.bytes != want {
		t.Errorf("bytes %d, want %d", c.bytes, want)
	}
	c.keep("k", promptEntry{typed: &api.PromptResponse{Prompt: strings.Repeat("x", maxCachedPromptBytes)}})
	if e := c.lookup([]byte("k")); e.typed == nil || e.typed.Prompt != "hello" {
		t.Errorf("an oversized typed answer replaced the entry")
	}
}
