package lsp

import "testing"

// initialize reports the binary's version (what `quire version` says,
// given by the command) as serverInfo.version, and what Go recorded when
// none is given: a release build never says "(devel)" there.
func TestServerInfoVersion(t *testing.T) {
	for _, tt := range []struct{ given, want string }{
		{"v1.2.3", "v1.2.3"},
		{"", version()},
	} {
		s := startSessionWith(t, t.TempDir(), Options{Version: tt.given})
		got, ok := s.init.ServerInfo.Version.Get()
		if !ok || got != tt.want || s.init.ServerInfo.Name != "quire" {
			t.Errorf("Version %q: serverInfo %q %q (set %v), want quire %q", tt.given, s.init.ServerInfo.Name, got, ok, tt.want)
		}
	}
}
