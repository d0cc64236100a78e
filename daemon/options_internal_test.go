package daemon

import (
	"testing"
	"time"
)

// TestWithDefaults: New fills a zero field with its default
// (DefaultOptions, what `quire serve`'s flags show) and keeps a field
// that is set.
func TestWithDefaults(t *testing.T) {
	def := DefaultOptions()
	got := Options{BodyTimeout: time.Second}.withDefaults()
	for _, f := range []struct {
		name      string
		got, want any
	}{
		{"GitListen", got.GitListen, def.GitListen},
		{"Poll", got.Poll, def.Poll},
		{"FetchTimeout", got.FetchTimeout, def.FetchTimeout},
		{"WriteTimeout", got.WriteTimeout, def.WriteTimeout},
		{"PruneInterval", got.PruneInterval, def.PruneInterval},
		{"IndexWait", got.IndexWait, def.IndexWait},
		{"IndexTimeout", got.IndexTimeout, def.IndexTimeout},
		{"HeaderTimeout", got.HeaderTimeout, def.HeaderTimeout},
		{"BodyTimeout", got.BodyTimeout, time.Second},
	} {
		if f.got != f.want {
			t.Errorf("%s = %v, want %v", f.name, f.got, f.want)
		}
	}
	if got.Socket == "" || got.CacheDir == "" || got.Embedder == nil || got.Logger == nil || got.Now == nil {
		t.Errorf("a default that depends on the environment is missing: %+v", got)
	}
}
