package daemon

import (
	"context"
	"sync"
	"time"

	"github.com/quirehq/quire/daemon/api"
)

// broker fans events out to the subscribers of GET /v1/events. A slow
// subscriber misses events rather than slowing the daemon down.
type broker struct {
	mu   sync.Mutex
	subs map[chan api.Event]struct{}
}

func newBroker() *broker { return &broker{subs: map[chan api.Event]struct{}{}} }

func (b *broker) publish(e api.Event) {
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs {
		select {
		case ch <- e:
		default:
		}
	}
}

func (b *broker) subscribe(ctx context.Context) <-chan api.Event {
	ch := make(chan api.Event, 256)
	b.mu.Lock()
	b.subs[ch] = struct{}{}
	b.mu.Unlock()
	go func() {
		<-ctx.Done()
		b.mu.Lock()
		delete(b.subs, ch)
		b.mu.Unlock()
		close(ch)
	}()
	return ch
}
