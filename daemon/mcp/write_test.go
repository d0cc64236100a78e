package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
)

// TestWriteContract: what memory_write's description and its if_match
// schema say about if_match is what the server does.
func TestWriteContract(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, daemon.Options{})
	td.deploy(t, "alpha", "alpha", alphaFiles)
	cs := mustConnect(t, socketHTTP(td.socket), "http://quire/mcp?agent=alpha", nil)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var tool *sdk.Tool
	for _, tl := range tools.Tools {
		if tl.Name == "memory_write" {
			tool = tl
		}
	}
	schema, _ := json.Marshal(tool.InputSchema)
	var s struct {
		Properties map[string]struct{ Description string }
		Required   []string
	}
	json.Unmarshal(schema, &s)
	ifMatch := s.Properties["if_match"].Description
	for _, say := range []string{"* to create a file that does not exist yet", "refused with code stale", "* on a file that exists with code exists"} {
		if !strings.Contains(ifMatch, say) {
			t.Errorf("if_match's schema %q does not say %q", ifMatch, say)
		}
	}
	for _, say := range []string{"if_match * creates a file that does not exist yet (refused with code exists when it does)", "refused with code stale"} {
		if !strings.Contains(tool.Description, say) {
			t.Errorf("memory_write's description %q does not say %q", tool.Description, say)
		}
	}
	if !strings.Contains(strings.Join(s.Required, " "), "if_match") {
		t.Errorf("if_match is not required: %s", schema)
	}

	// What they say, done.
	if e := callErr(t, cs, "memory_write", map[string]any{"path": "MEMORY.md", "content": "x\n", "if_match": "*"}); e.Code != "exists" {
		t.Errorf("* on a file that exists: %+v, want exists", e)
	}
	var wrote api.WriteResponse
	callOK(t, cs, "memory_write", map[string]any{"path": "memory/new.md", "content": "new\n", "if_match": "*"}, &wrote)
	callOK(t, cs, "memory_write", map[string]any{"path": "memory/new.md", "content": "newer\n", "if_match": wrote.ETag}, nil)
	if e := callErr(t, cs, "memory_write", map[string]any{"path": "memory/new.md", "content": "lost\n", "if_match": wrote.ETag}); e.Code != "stale" {
		t.Errorf("an etag the file no longer has: %+v, want stale", e)
	}
	if e := callErr(t, cs, "memory_write", map[string]any{"path": "memory/new.md", "content": "x\n"}); e.Code != "bad_request" || !strings.Contains(e.Message, "if_match") {
		t.Errorf("no if_match: %+v, want bad_request naming if_match", e)
	}
}
