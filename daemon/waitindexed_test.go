package daemon_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/memstore"
)

// gatedStore holds every Index call until open is closed, then answers
// with err, or as the store it wraps when err is nil.
type gatedStore struct {
	memory.Store
	open chan struct{}
	err  error
}

func (g *gatedStore) Index(ctx context.Context, agent, commit string, docs []memory.Document) (memory.IndexStats, error) {
	select {
	case <-g.open:
	case <-ctx.Done():
		return memory.IndexStats{}, ctx.Err()
	}
	if g.err != nil {
		return memory.IndexStats{}, g.err
	}
	return g.Store.Index(ctx, agent, commit, docs)
}

// TestWaitIndexed: WaitIndexed returns once the store holds what is
// deployed, not before, and with the index run's error when it failed.
func TestWaitIndexed(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		err  error
	}{{"indexed", nil}, {"failed", errors.New("the store is full")}} {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := memstore.New(memstore.Options{Embedder: memory.Builtin{}})
			if err != nil {
				t.Fatal(err)
			}
			store := &gatedStore{Store: ms, open: make(chan struct{}), err: tt.err}
			td := startDaemon(t, daemon.Options{Store: store})
			td.push(t, newWorkTree(t, botFiles), "bot")
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			waited := make(chan error, 1)
			go func() { waited <- td.d.WaitIndexed(ctx) }()
			select {
			case err := <-waited:
				t.Fatalf("WaitIndexed returned %v while the index run was held", err)
			case <-time.After(100 * time.Millisecond):
			}
			close(store.open)
			select {
			case err := <-waited:
				if (err != nil) != (tt.err != nil) {
					t.Fatalf("WaitIndexed: %v, want the error %v", err, tt.err)
				}
			case <-ctx.Done():
				t.Fatal("WaitIndexed did not return once the index run was over")
			}
			st, err := td.c.Status(ctx)
			if err != nil || len(st.Agents) != 1 || (st.Agents[0].Indexed == st.Agents[0].Deployed) != (tt.err == nil) {
				t.Fatalf("status after WaitIndexed: %+v %v", st, err)
			}
		})
	}
}
