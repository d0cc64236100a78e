package xdg

import (
	"path/filepath"
	"testing"
)

// Quire's directories are looked up in one place (issue #13, item 14:
// four XDG lookups): the variable, else under HOME, else nothing; the
// runtime directory falls back to a private temporary one.
func TestQuireDirs(t *testing.T) {
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	all := env(map[string]string{"HOME": "/h", "XDG_CACHE_HOME": "/c", "XDG_CONFIG_HOME": "/f", "XDG_STATE_HOME": "/s", "XDG_RUNTIME_DIR": "/r"})
	home := env(map[string]string{"HOME": "/h"})
	none := env(nil)
	tests := []struct {
		name string
		dir  func(func(string) string) string
		env  func(string) string
		want string
	}{
		{"cache from its variable", CacheDir, all, "/c/quire"},
		{"cache under HOME", CacheDir, home, "/h/.cache/quire"},
		{"cache without either", CacheDir, none, ""},
		{"config from its variable", ConfigDir, all, "/f/quire"},
		{"config under HOME", ConfigDir, home, "/h/.config/quire"},
		{"config without either", ConfigDir, none, ""},
		{"state from its variable", StateDir, all, "/s/quire"},
		{"state under HOME", StateDir, home, "/h/.local/state/quire"},
		{"state without either", StateDir, none, ""},
		{"runtime from its variable", RuntimeDir, all, "/r/quire"},
		{"runtime without it", RuntimeDir, home, PrivateTempDir()},
	}
	for _, tt := range tests {
		if got := tt.dir(tt.env); got != filepath.FromSlash(tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
