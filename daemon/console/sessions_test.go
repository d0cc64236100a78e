package console

import (
	"testing"
	"time"

	"github.com/quirehq/quire/daemon/api"
)

func TestSessionsExpire(t *testing.T) {
	now := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	s := NewSessions(func() time.Time { return now })
	g := api.Grant{Agents: []string{"bot"}, Person: api.Person{ID: "ada"}}

	code := s.Code(g)
	if got, ok := s.redeem(code); !ok || got.Person.ID != "ada" {
		t.Fatalf("a fresh code: %+v %v", got, ok)
	}
	if _, ok := s.redeem(code); ok {
		t.Fatal("a code redeemed twice")
	}
	late := s.Code(g)
	now = now.Add(CodeTTL + time.Second)
	if _, ok := s.redeem(late); ok {
		t.Fatal("an expired code redeemed")
	}

	id, ss := s.open(g)
	if got, ok := s.lookup(id); !ok || got != ss {
		t.Fatal("a new session is not found")
	}
	if ss.csrfOK("") || ss.csrfOK(ss.csrf+"x") || !ss.csrfOK(ss.csrf) {
		t.Fatal("the CSRF check accepts a wrong value or refuses the right one")
	}
	now = now.Add(SessionTTL + time.Second)
	if _, ok := s.lookup(id); ok {
		t.Fatal("an expired session is found")
	}
	id2, _ := s.open(g)
	s.close(id2)
	if _, ok := s.lookup(id2); ok {
		t.Fatal("a closed session is found")
	}
	if len(s.sessions) != 0 {
		t.Fatalf("%d sessions kept after expiry and logout", len(s.sessions))
	}
}
