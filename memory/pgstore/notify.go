package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Bounds of a Listen connection: how long it may wait for a notification
// before it checks that the server still answers, how long that check and
// a connection attempt may take, and the backoff between attempts.
const (
	listenIdle    = 30 * time.Second
	listenCheck   = 5 * time.Second
	listenBackoff = 100 * time.Millisecond
	listenMaxWait = 10 * time.Second
)

// channelName scopes a channel to the store's schema: daemons that keep
// their tables in different schemas of one database do not hear each
// other. PostgreSQL limits a channel name to 63 bytes; a longer one is
// replaced by a hash of it.
func (s *Store) channelName(channel string) string {
	name := s.schemaName + "." + channel
	if len(name) > 63 {
		sum := sha256.Sum256([]byte(name))
		name = "quire." + hex.EncodeToString(sum[:16])
	}
	return name
}

// Notify sends payload on channel (PostgreSQL NOTIFY, at most 8000
// bytes) to every session listening on it with Listen on a store of the
// same schema, this one's included.
func (s *Store) Notify(ctx context.Context, channel, payload string) error {
	if _, err := s.pool.Exec(ctx, "SELECT pg_notify($1, $2)", s.channelName(channel), payload); err != nil {
		return fmt.Errorf("notify %s: %w", channel, err)
	}
	return nil
}

// Listen calls onNotify with the payload of every notification on
// channel (see Notify) until ctx ends, then returns nil. It holds a
// connection of its own (outside the pool, with the pool's settings).
// When that connection drops, or stops answering, Listen logs a warning
// and connects again with backoff; notifications sent in between are
// lost, so onConnect (when set) is called after every successful LISTEN,
// first=false after a reconnection: the caller catches up there. Calls of
// onNotify and onConnect are sequential.
func (s *Store) Listen(ctx context.Context, channel string, onConnect func(first bool), onNotify func(payload string)) error {
	name := s.channelName(channel)
	wait := listenBackoff
	first := true
	for {
		start := time.Now()
		err := s.listenOnce(ctx, name, func() {
			if onConnect != nil {
				onConnect(first)
			}
			if !first {
				s.log.Info("listening for notifications again", "channel", channel)
			}
			first = false
		}, onNotify)
		if ctx.Err() != nil {
			return nil
		}
		if time.Since(start) > time.Minute {
			wait = listenBackoff // it ran well for a while: start over
		}
		s.log.Warn("the notification connection dropped; reconnecting", "channel", channel, "in", wait, "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait/2 + rand.N(wait/2+1)):
		}
		wait = min(2*wait, listenMaxWait)
	}
}

// listenOnce connects, listens on channel name and delivers notifications
// until the connection fails or ctx ends.
func (s *Store) listenOnce(ctx context.Context, name string, connected func(), onNotify func(string)) error {
	cfg := s.pool.Config().ConnConfig.Copy()
	if cfg.ConnectTimeout <= 0 || cfg.ConnectTimeout > listenCheck {
		cfg.ConnectTimeout = listenCheck
	}
	cfg.RuntimeParams["application_name"] = "quire listen"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		conn.Close(cctx)
	}()
	lctx, cancel := context.WithTimeout(ctx, listenCheck)
	_, err = conn.Exec(lctx, "LISTEN "+pgx.Identifier{name}.Sanitize())
	cancel()
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	connected()
	for {
		wctx, cancel := context.WithTimeout(ctx, listenIdle)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			onNotify(n.Payload)
			continue
		case ctx.Err() != nil:
			return ctx.Err()
		case !pgconn.Timeout(err) || conn.IsClosed():
			return fmt.Errorf("wait for notifications: %w", err)
		}
		// Quiet for a while: a server that went away without closing
		// the connection does not answer a ping.
		pctx, cancel := context.WithTimeout(ctx, listenCheck)
		err = conn.Ping(pctx)
		cancel()
		if err != nil {
			return fmt.Errorf("the server stopped answering: %w", err)
		}
	}
}
