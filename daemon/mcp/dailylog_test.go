package mcp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
)

// TestAppendNamesRoomAndUser: a daily-log entry written through the API or
// the MCP tool names the room and the user it was written in, in the
// design's "**Room:** / **User:**" lines; a room of two lines is refused.
func TestAppendNamesRoomAndUser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	td := startDaemon(t, daemon.Options{})
	td.deploy(t, "alpha", "alpha", alphaFiles)
	cs := mustConnect(t, socketHTTP(td.socket), "http://quire/mcp?agent=alpha&user=alice", nil)

	var viaMCP api.WriteResponse
	callOK(t, cs, "memory_append", map[string]any{"text": "Chose JWT. MCP-MARK", "room": "#dev"}, &viaMCP)
	viaAPI, err := td.c.MemoryAppend(ctx, "alpha", api.AppendRequest{User: "alice", Room: "#ops", Text: "Paged Rui. API-MARK"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := td.c.ReadFile(ctx, "alpha", viaAPI.Path, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**Room:** #dev\n**User:** alice\n\nChose JWT. MCP-MARK\n", "**Room:** #ops\n**User:** alice\n\nPaged Rui. API-MARK\n"} {
		if !strings.Contains(f.Content, want) {
			t.Errorf("the daily log lacks %q:\n%s", want, f.Content)
		}
	}
	if _, err := td.c.MemoryAppend(ctx, "alpha", api.AppendRequest{Room: "a\nb", Text: "x"}); err == nil || !strings.Contains(err.Error(), "room") {
		t.Errorf("a room of two lines: %v", err)
	}
}
