package daemon_test

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/quirehq/quire/daemon"
)

// TestLogsNameTheirPart: every line the daemon logs says which part
// logged it (a component), so that an operator can follow one part.
func TestLogsNameTheirPart(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	td := startDaemon(t, daemon.Options{Logger: log})
	td.push(t, newWorkTree(t, botFiles), "bot")
	td.waitIndexed(t)
	td.stop()
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		c, _ := rec["component"].(string)
		if c == "" {
			t.Errorf("a line without a component: %s", line)
		}
		seen[c] = true
	}
	for _, c := range []string{"daemon", "deployer", "indexer"} {
		if !seen[c] {
			t.Errorf("no line of component %s in:\n%s", c, buf.String())
		}
	}
}
