package pgstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quirehq/quire/memory"
)

// listening runs Listen on s until the test ends and returns the
// payloads it hears and the values of first of each connection.
type listening struct {
	notes   chan string
	connect chan bool
}

func listen(t *testing.T, s *Store, channel string) *listening {
	t.Helper()
	l := &listening{notes: make(chan string, 100), connect: make(chan bool, 10)}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := s.Listen(ctx, channel, func(first bool) { l.connect <- first }, func(p string) { l.notes <- p }); err != nil {
			t.Errorf("Listen: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
	select {
	case first := <-l.connect:
		if !first {
			t.Fatal("the first connection says first=false")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Listen did not connect within 10 s")
	}
	return l
}

func (l *listening) next(t *testing.T) string {
	t.Helper()
	select {
	case p := <-l.notes:
		return p
	case <-time.After(5 * time.Second):
		t.Fatal("no notification within 5 s")
		return ""
	}
}

func (l *listening) none(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case p := <-l.notes:
		t.Fatalf("heard %q, want nothing", p)
	case <-time.After(within):
	}
}

// TestNotifyListen: a notification reaches every listener of the schema
// (the sender's own included), in order, and no listener of another
// schema or channel.
func TestNotifyListen(t *testing.T) {
	schema := testSchema(t)
	a := openStore(t, schema, memory.None{})
	b := openStore(t, schema, memory.None{})
	other := openStore(t, testSchema(t), memory.None{})
	la := listen(t, a, "live")
	lb := listen(t, b, "live")
	lother := listen(t, other, "live")
	lchan := listen(t, b, "elsewhere")
	ctx := context.Background()
	for i := range 3 {
		if err := a.Notify(ctx, "live", fmt.Sprintf("commit-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		want := fmt.Sprintf("commit-%d", i)
		if got := lb.next(t); got != want {
			t.Errorf("b heard %q, want %q", got, want)
		}
		if got := la.next(t); got != want {
			t.Errorf("a (the sender) heard %q, want %q", got, want)
		}
	}
	lother.none(t, 200*time.Millisecond)
	lchan.none(t, 0)
	if err := other.Notify(ctx, "live", "theirs"); err != nil {
		t.Fatal(err)
	}
	if got := lother.next(t); got != "theirs" {
		t.Errorf("the other schema heard %q", got)
	}
	lb.none(t, 200*time.Millisecond)
}

// TestListenReconnects: when the server ends the listening connection,
// Listen connects again, says so (first=false), and hears what is sent
// after.
func TestListenReconnects(t *testing.T) {
	schema := testSchema(t)
	s := openStore(t, schema, memory.None{})
	l := listen(t, s, "live")
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, databaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var killed int
	err = conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = 'quire listen' AND query LIKE $1`, "LISTEN %"+schema+"%").Scan(&killed)
	if err != nil {
		t.Fatal(err)
	}
	if killed != 1 {
		t.Fatalf("terminated %d listening connections, want 1", killed)
	}
	select {
	case first := <-l.connect:
		if first {
			t.Error("a reconnection says first=true")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Listen did not reconnect within 10 s")
	}
	if err := s.Notify(ctx, "live", "after"); err != nil {
		t.Fatal(err)
	}
	if got := l.next(t); got != "after" {
		t.Errorf("heard %q after the reconnection", got)
	}
}

func TestChannelName(t *testing.T) {
	short := &Store{schemaName: "quire"}
	if got := short.channelName("live"); got != "quire.live" {
		t.Errorf("channel %q", got)
	}
	long1 := &Store{schemaName: strings.Repeat("s", 60) + "1"}
	long2 := &Store{schemaName: strings.Repeat("s", 60) + "2"}
	n1, n2 := long1.channelName("live"), long2.channelName("live")
	if len(n1) > 63 || len(n2) > 63 || n1 == n2 {
		t.Errorf("long schemas give channels %q and %q: want distinct names of at most 63 bytes", n1, n2)
	}
}

// BenchmarkNotify: from Notify to the listener's callback on another
// connection.
func BenchmarkNotify(b *testing.B) {
	schema := testSchema(b)
	s, err := Open(context.Background(), Options{URL: databaseURL(b), Schema: schema, MaxConns: 4})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	heard := make(chan string, 1)
	connected := make(chan struct{})
	go s.Listen(ctx, "bench", func(bool) { close(connected) }, func(p string) { heard <- p })
	<-connected
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if err := s.Notify(ctx, "bench", "x"); err != nil {
			b.Fatal(err)
		}
		<-heard
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	reportLatency(b, lat)
}

func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
