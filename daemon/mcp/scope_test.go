package mcp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/quirehq/quire/daemon"
)

// TestMemoryGetAndWriteAgree: memory_get and memory_write default to
// the same scope, so a read's etag is the write's; an error about a
// file in a session with a user names the scope.
func TestMemoryGetAndWriteAgree(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, daemon.Options{})
	td.deploy(t, "alpha", "alpha", alphaFiles)
	hc := socketHTTP(td.socket)

	// carol has no MEMORY.md of her own: the default scope (user) says
	// so and where the shared one is.
	carol := mustConnect(t, hc, "http://quire/mcp?agent=alpha&user=carol", nil)
	if e := callErr(t, carol, "memory_get", map[string]any{"path": "MEMORY.md"}); e.Code != "not_found" ||
		e.Message != "scope user: user carol has no MEMORY.md of their own; the agent's shared MEMORY.md is read with scope agent" {
		t.Errorf("carol's memory_get MEMORY.md: %+v", e)
	}
	var got struct{ Scope, ETag, Text string }
	callOK(t, carol, "memory_get", map[string]any{"path": "MEMORY.md", "scope": "agent"}, &got)
	// The shared file's etag without its scope is the user's file's
	// question: the error says which file it asked about.
	if e := callErr(t, carol, "memory_write", map[string]any{"path": "MEMORY.md", "content": "x\n", "if_match": got.ETag}); e.Code != "stale" ||
		!strings.HasPrefix(e.Message, "scope user (user carol's own files; the agent's shared files are scope agent): users/carol/MEMORY.md does not exist") {
		t.Errorf("memory_write with the shared etag, no scope: %+v", e)
	}
	callOK(t, carol, "memory_write", map[string]any{"path": "MEMORY.md", "content": got.Text + "Carol noted.\n", "if_match": got.ETag, "scope": got.Scope}, nil)

	// alice has one: read and write round-trip with no scope at all.
	alice := mustConnect(t, hc, "http://quire/mcp?agent=alpha&user=alice", nil)
	callOK(t, alice, "memory_get", map[string]any{"path": "MEMORY.md"}, &got)
	if got.Scope != "user" {
		t.Fatalf("alice's memory_get MEMORY.md: scope %q, want user", got.Scope)
	}
	callOK(t, alice, "memory_write", map[string]any{"path": "MEMORY.md", "content": got.Text + "Alice noted.\n", "if_match": got.ETag}, nil)
	f, err := td.c.ReadFile(context.Background(), "alpha", "MEMORY.md", "alice")
	if err != nil || !strings.HasSuffix(f.Content, "Alice noted.\n") {
		t.Errorf("alice's MEMORY.md after the write: %q, %v", f.Content, err)
	}
	if f, _ := td.c.ReadFile(context.Background(), "alpha", "MEMORY.md", ""); !strings.HasSuffix(f.Content, "Carol noted.\n") || strings.Contains(f.Content, "Alice") {
		t.Errorf("the shared MEMORY.md: %q", f.Content)
	}
}
