package daemon

import (
	"fmt"
	"strings"
	"testing"
)

// TestPromptCacheBoundedByBytes: distinct requests cannot grow a
// deployment's prompt cache past its byte bound, and an answer too large
// to be worth keeping is not kept.
func TestPromptCacheBoundedByBytes(t *testing.T) {
	dep := &deployment{prompts: map[string][]byte{}}
	big := make([]byte, 3<<20)
	dep.cachePrompt("huge", big)
	if dep.cachedPrompt([]byte("huge")) != nil || dep.promptBytes != 0 {
		t.Fatalf("a 3 MB answer was cached (%d bytes held)", dep.promptBytes)
	}
	answer := []byte(strings.Repeat("x", 200<<10))
	for i := range 1000 {
		dep.cachePrompt(fmt.Sprintf("req-%d", i), answer)
		if dep.promptBytes > maxPromptCacheBytes {
			t.Fatalf("after %d answers the cache holds %d bytes, bound %d", i+1, dep.promptBytes, maxPromptCacheBytes)
		}
	}
	if dep.cachedPrompt([]byte("req-999")) == nil {
		t.Error("the newest answer is not cached")
	}
	held := 0
	for k, v := range dep.prompts {
		held += len(k) + len(v)
	}
	if held != dep.promptBytes {
		t.Errorf("promptBytes %d, but the cache holds %d", dep.promptBytes, held)
	}
	dep.cachePrompt("req-999", answer) // a repeat does not count twice
	if held != dep.promptBytes {
		t.Errorf("after a repeat promptBytes %d, want %d", dep.promptBytes, held)
	}
}
