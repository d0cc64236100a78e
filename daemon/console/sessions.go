package console

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"sync"
	"time"

	"github.com/quirehq/quire/daemon/api"
)

// SessionTTL is how long a console session lasts; CodeTTL how long a
// one-time login code waits for its use.
const (
	SessionTTL = 12 * time.Hour
	CodeTTL    = 5 * time.Minute
)

// session is a signed-in person: what their token grants, and the CSRF
// token every change must carry.
type session struct {
	grant   api.Grant
	csrf    string
	expires time.Time
}

// Sessions keeps the console's sessions and one-time codes in memory,
// keyed by the SHA-256 of their secret (a dump of the map holds no
// cookie). They are never logged.
type Sessions struct {
	mu       sync.Mutex
	sessions map[[32]byte]*session
	codes    map[[32]byte]code
	now      func() time.Time
}

type code struct {
	grant   api.Grant
	expires time.Time
}

// NewSessions returns an empty store with the clock now (nil: time.Now).
func NewSessions(now func() time.Time) *Sessions {
	if now == nil {
		now = time.Now
	}
	return &Sessions{sessions: map[[32]byte]*session{}, codes: map[[32]byte]code{}, now: now}
}

func secret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand does not fail (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

func key(s string) [32]byte { return sha256.Sum256([]byte(s)) }

// Code issues a one-time login code for g, valid for CodeTTL.
func (s *Sessions) Code(g api.Grant) string {
	c := secret()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep()
	s.codes[key(c)] = code{grant: g, expires: s.now().Add(CodeTTL)}
	return c
}

// redeem uses code c up and returns its grant.
func (s *Sessions) redeem(c string) (api.Grant, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key(c)
	cd, ok := s.codes[k]
	delete(s.codes, k)
	if !ok || s.now().After(cd.expires) {
		return api.Grant{}, false
	}
	return cd.grant, true
}

// open starts a session for g and returns its cookie value.
func (s *Sessions) open(g api.Grant) (string, *session) {
	id := secret()
	ss := &session{grant: g, csrf: secret(), expires: s.now().Add(SessionTTL)}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep()
	s.sessions[key(id)] = ss
	return id, ss
}

// lookup returns the live session of cookie value id.
func (s *Sessions) lookup(id string) (*session, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.sessions[key(id)]
	if !ok || s.now().After(ss.expires) {
		return nil, false
	}
	return ss, true
}

// close ends the session of cookie value id.
func (s *Sessions) close(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sessions, key(id))
}

// sweep drops what has expired; callers hold mu.
func (s *Sessions) sweep() {
	now := s.now()
	for k, v := range s.sessions {
		if now.After(v.expires) {
			delete(s.sessions, k)
		}
	}
	for k, v := range s.codes {
		if now.After(v.expires) {
			delete(s.codes, k)
		}
	}
}

// csrfOK compares a request's CSRF header with the session's in
// constant time.
func (ss *session) csrfOK(h string) bool {
	return h != "" && subtle.ConstantTimeCompare([]byte(h), []byte(ss.csrf)) == 1
}
