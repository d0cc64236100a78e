package mcp_test

import (
	"context"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/client"
	"github.com/quirehq/quire/daemon/mcp"
)

// TestToolIdempotencyKey: memory_append and memory_write take an
// idempotency_key, the API's Idempotency-Key: called again with it, the
// write is not applied again and the first answer comes back (a
// memory_write whose if_match is stale by then included), in process
// and through a client of the daemon (quire mcp). A key that is not
// printable ASCII is refused naming the argument.
func TestToolIdempotencyKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	td := startDaemon(t, daemon.Options{})
	td.deploy(t, "alpha", "alpha", alphaFiles)
	local := mustConnect(t, socketHTTP(td.socket), "http://quire/mcp?agent=alpha&user=alice", nil)

	// The same server over a client of the daemon, as quire mcp runs it.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, ct := sdk.NewInMemoryTransports()
	srv := mcp.NewServer(sctx, mcp.Remote(&client.Client{Socket: td.socket}, nil), mcp.Identity{Agent: "alpha", User: "alice"}, mcp.Options{})
	if _, err := srv.Connect(sctx, st, nil); err != nil {
		t.Fatal(err)
	}
	remote, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "0"}, nil).Connect(sctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer remote.Close()

	for name, cs := range map[string]*sdk.ClientSession{"in process": local, "quire mcp": remote} {
		t.Run(name, func(t *testing.T) {
			mark := "ONCE-" + strings.ReplaceAll(name, " ", "-")
			args := map[string]any{"text": "Alice asked again. " + mark, "idempotency_key": "k-" + mark}
			var first, again api.WriteResponse
			callOK(t, cs, "memory_append", args, &first)
			callOK(t, cs, "memory_append", args, &again)
			if again != first {
				t.Errorf("memory_append again: %+v, first %+v", again, first)
			}
			f, err := td.c.ReadFile(ctx, "alpha", first.Path, "")
			if err != nil || strings.Count(f.Content, mark) != 1 {
				t.Errorf("the daily log holds the entry %d times (%v)", strings.Count(f.Content, mark), err)
			}

			var got struct{ ETag string }
			callOK(t, cs, "memory_get", map[string]any{"path": "MEMORY.md"}, &got)
			w := map[string]any{"path": "MEMORY.md", "if_match": got.ETag, "content": "# Memory\n\n" + mark + "\n", "idempotency_key": "w-" + mark}
			callOK(t, cs, "memory_write", w, &first)
			callOK(t, cs, "memory_write", w, &again)
			if again != first {
				t.Errorf("memory_write again: %+v, first %+v", again, first)
			}

			e := callErr(t, cs, "memory_append", map[string]any{"text": "x", "idempotency_key": "tab\there"})
			if e.Code != api.CodeBadRequest || !strings.HasPrefix(e.Message, "idempotency_key: byte 4 is 0x09") {
				t.Errorf("a bad key: %+v", e)
			}
		})
	}
}
