package mcp

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quirehq/quire/daemon/api"
)

// TestProtocolErrorCodes: the errors of prompts/get and resources/read
// carry JSON-RPC codes (never 0), the API's message once (no
// "bad_request: bad request:") and its code in data.
func TestProtocolErrorCodes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := NewServer(ctx, &fakeBackend{}, Identity{Agent: "alpha", User: "alice"}, Options{})
	st, ct := sdk.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// The SDK's client speaks the sessionless protocol, where a missing
	// resource is -32602 (TestStdioBatchesAndNotFoundByVersion has the
	// versions that begin with initialize: -32002).
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("the SDK's client speaks %s; the codes below are those of 2026-07-28", v)
	}
	prompt := func(args map[string]string) error {
		_, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: PromptName, Arguments: args})
		return err
	}
	read := func(uri string) func() error {
		return func() error {
			_, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
			return err
		}
	}
	for _, c := range []struct {
		name string
		call func() error
		code int64
		msg  string
		data string
	}{
		{"a bad prompt argument", func() error { return prompt(map[string]string{"session": "weekly"}) }, -32602, `bad request: session "weekly" is unknown; use main, subagent or cron`, `{"code":"bad_request"}`},
		{"another user's prompt", func() error { return prompt(map[string]string{"user": "bob"}) }, -32602, `this session acts for user "alice"; it cannot assemble user "bob"'s prompt`, `{"code":"forbidden"}`},
		{"a missing resource", read("quire://alpha/nope.md"), -32602, `agent "alpha" has no file nope.md`, `{"code":"not_found","uri":"quire://alpha/nope.md"}`},
		{"another agent's resource", read("quire://beta/SOUL.md"), -32602, "resource quire://beta/SOUL.md does not exist", `{"code":"not_found","uri":"quire://beta/SOUL.md"}`},
		{"a URI no resource matches", read("file:///etc/passwd"), -32602, "resource file:///etc/passwd does not exist", `{"code":"not_found","uri":"file:///etc/passwd"}`},
		{"another user's resource", read("quire://alpha/users/bob/USER.md"), -32602, "never by their users/ path", `{"code":"forbidden","uri":"quire://alpha/users/bob/USER.md"}`},
	} {
		err := c.call()
		var w *jsonrpc.Error
		if !errors.As(err, &w) || w.Code != c.code || !strings.Contains(w.Message, c.msg) || string(w.Data) != c.data || strings.Contains(w.Message, "bad_request:") {
			t.Errorf("%s: %v (code %d, data %s), want code %d, message %q, data %s", c.name, err, w.Code, w.Data, c.code, c.msg, c.data)
		}
	}
}

// TestNotFoundOfTheSessionlessProtocol: a request of protocol 2026-07-28
// (its version in _meta) learns of a missing resource by -32602.
func TestNotFoundOfTheSessionlessProtocol(t *testing.T) {
	for version, want := range map[string]int64{"2026-07-28": -32602, "2025-11-25": -32002, "": -32002} {
		params := &sdk.ReadResourceParams{URI: "quire://alpha/nope.md"}
		if version != "" {
			params.Meta = sdk.Meta{sdk.MetaKeyProtocolVersion: version}
		}
		err := rpcError("resources/read", &sdk.ReadResourceRequest{Params: params}, api.Errorf(api.CodeNotFound, "no file nope.md"))
		var w *jsonrpc.Error
		if !errors.As(err, &w) || w.Code != want || w.Message != "no file nope.md" {
			t.Errorf("_meta version %q: %v, want code %d", version, err, want)
		}
	}
}
