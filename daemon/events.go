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
	mu     sync.Mutex
	subs   map[chan api.Event]struct{}
	closed bool
	// recent are the last recentEvents events, oldest first (the
	// console's overview).
	recent []api.Event
}

// recentEvents is how many events the broker keeps for the overview.
const recentEvents = 50

// lastEvents returns the events kept, newest first.
func (b *broker) lastEvents() []api.Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]api.Event, len(b.recent))
	for i, e := range b.recent {
		out[len(out)-1-i] = e
	}
	return out
}

func newBroker() *broker { return &broker{subs: map[chan api.Event]struct{}{}} }

func (b *broker) publish(e api.Event) {
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.recent) == recentEvents {
		b.recent = append(b.recent[:0], b.recent[1:]...)
	}
	b.recent = append(b.recent, e)
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
	defer b.mu.Unlock()
	if b.closed {
		close(ch)
		return ch
	}
	b.subs[ch] = struct{}{}
	go func() {
		<-ctx.Done()
		b.mu.Lock()
		defer b.mu.Unlock()
		if _, ok := b.subs[ch]; ok {
			delete(b.subs, ch)
			close(ch)
		}
	}()
	return ch
}

// close ends every subscription (at shutdown, so that event streams do
// not keep the server from stopping).
func (b *broker) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for ch := range b.subs {
		delete(b.subs, ch)
		close(ch)
	}
}
