package mcp

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of SessionLimits.
const (
	DefaultSessionsPerToken = 64
	DefaultSessions         = 1024
	DefaultSessionIdle      = 10 * time.Minute
)

// SessionLimits bound the sessions of streamable HTTP: each one holds
// about 200 KB until it is closed or idles out.
type SessionLimits struct {
	// PerToken is the most sessions one bearer token may have open
	// (default 64). Callers on the unix socket have no token: they count
	// toward Total only.
	PerToken int
	// Total is the most sessions open at once (default 1024).
	Total int
	// Idle closes a session without a request for that long (default
	// 10 minutes).
	Idle time.Duration
	// Now is the clock idleness is measured by; nil means time.Now.
	Now func() time.Time
}

// Sessions keeps the limits for the handlers that share it (a daemon's
// unix socket and TCP listener): who has which session open, and since
// when it is idle.
type Sessions struct {
	lim SessionLimits

	mu       sync.Mutex
	open     map[string]*openSession // by session ID
	byCaller map[string]int          // open and reserved, by caller
	reserved int                     // initializes under way
	refused  map[string]bool         // a limit refused since it last let one open: the caller's, "" for the total
}

type openSession struct {
	caller string
	ss     *sdk.ServerSession
	last   time.Time // of the last request's end
	busy   int       // requests under way
}

// NewSessions returns the session limits lim, its zero fields set to
// the defaults.
func NewSessions(lim SessionLimits) *Sessions {
	if lim.PerToken <= 0 {
		lim.PerToken = DefaultSessionsPerToken
	}
	if lim.Total <= 0 {
		lim.Total = DefaultSessions
	}
	if lim.Idle <= 0 {
		lim.Idle = DefaultSessionIdle
	}
	if lim.Now == nil {
		lim.Now = time.Now
	}
	return &Sessions{lim: lim, open: map[string]*openSession{}, byCaller: map[string]int{}, refused: map[string]bool{}}
}

// Open is the number of sessions open.
func (s *Sessions) Open() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.open)
}

// fullError is the answer to an initialize over a limit; first is set
// for the first refusal since the limit last let a session open (the
// one worth a warning: a flood is not a flood of log lines).
type fullError struct {
	status int
	msg    string
	first  bool
}

func (e *fullError) Error() string { return e.msg }

// reserve takes a slot for a new session of caller ("" for the unix
// socket, which has no per-token limit), after closing the sessions
// idle for lim.Idle; a full limit is a *fullError naming it.
func (s *Sessions) reserve(caller string) error {
	idle := s.expire()
	for _, ss := range idle {
		ss.Close()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if caller != "" && s.byCaller[caller] >= s.lim.PerToken {
		return &fullError{http.StatusTooManyRequests, fmt.Sprintf(
			"this token has %d MCP sessions open, the most quire serve --mcp-sessions-per-token allows: close one (DELETE %s with its Mcp-Session-Id) or reuse it; a session closes after %v without a request (--mcp-session-idle)",
			s.byCaller[caller], Path, s.lim.Idle), s.refuse(caller)}
	}
	if len(s.open)+s.reserved >= s.lim.Total {
		return &fullError{http.StatusServiceUnavailable, fmt.Sprintf(
			"the daemon has %d MCP sessions open, the most quire serve --mcp-sessions allows: retry when one closes (after %v without a request, --mcp-session-idle) or raise --mcp-sessions",
			len(s.open)+s.reserved, s.lim.Idle), s.refuse("")}
	}
	delete(s.refused, caller)
	delete(s.refused, "")
	s.byCaller[caller]++
	s.reserved++
	return nil
}

// refuse notes a refusal by limit ("" the total) and reports whether it
// is the first since the limit last let a session open; s.mu is held.
func (s *Sessions) refuse(limit string) bool {
	first := !s.refused[limit]
	s.refused[limit] = true
	return first
}

// expire forgets the sessions idle for lim.Idle and returns them, to be
// closed.
func (s *Sessions) expire() []*sdk.ServerSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.lim.Now()
	var idle []*sdk.ServerSession
	for id, o := range s.open {
		if o.busy == 0 && now.Sub(o.last) >= s.lim.Idle {
			idle = append(idle, o.ss)
			s.forget(id)
		}
	}
	return idle
}

// opened turns caller's reservation into the open session ss, or gives
// it back when ss is nil (the initialize made no session). The session
// is forgotten when it closes, however it closes.
func (s *Sessions) opened(caller string, ss *sdk.ServerSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reserved--
	if ss == nil {
		s.drop(caller)
		return
	}
	id := ss.ID()
	s.open[id] = &openSession{caller: caller, ss: ss, last: s.lim.Now()}
	go func() {
		_ = ss.Wait()
		s.mu.Lock()
		defer s.mu.Unlock()
		if o := s.open[id]; o != nil && o.ss == ss {
			s.forget(id)
		}
	}()
}

// closed forgets session id, which its client closed.
func (s *Sessions) closed(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forget(id)
}

// forget drops the open session id; s.mu is held.
func (s *Sessions) forget(id string) {
	if o := s.open[id]; o != nil {
		delete(s.open, id)
		s.drop(o.caller)
	}
}

// drop takes one session off caller's count; s.mu is held.
func (s *Sessions) drop(caller string) {
	if s.byCaller[caller]--; s.byCaller[caller] <= 0 {
		delete(s.byCaller, caller)
	}
}

// begin and end bracket a request to session id: a session is idle
// from the end of its last request.
func (s *Sessions) begin(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o := s.open[id]; o != nil {
		o.busy++
	}
}

func (s *Sessions) end(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o := s.open[id]; o != nil {
		o.busy--
		o.last = s.lim.Now()
	}
}
