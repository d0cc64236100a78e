package api

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
)

// Person is who holds a token: the name and email a person's commits
// (an approved proposal, an edit in the console) are authored with.
// They come from the token file, never from a request.
type Person struct {
	// ID names the token in logs and, when Name is empty, authors its
	// commits: the token file's id=, else "token-" and the first 8 hex
	// digits of the token's SHA-256.
	ID    string `json:"id"`
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
}

// People maps a bearer token to its holder.
type People map[string]Person

// Person returns the holder of token, in constant time over every
// token (as Tokens.agents).
func (p People) Person(token string) (Person, bool) {
	want := sha256.Sum256([]byte(token))
	var out Person
	found := 0
	for k, v := range p {
		have := sha256.Sum256([]byte(k))
		if subtle.ConstantTimeCompare(have[:], want[:]) == 1 {
			out, found = v, 1
		}
	}
	return out, found == 1
}

// TokenID is the id of a token the token file gives none: "token-"
// and the first 8 hex digits of its SHA-256 (not enough to guess it).
func TokenID(token string) string {
	h := sha256.Sum256([]byte(token))
	return "token-" + hex.EncodeToString(h[:4])
}

// ParseTokenFile reads a token file as ParseTokens does, with optional
// key=value fields after the agents: name="Full Name", email=addr and
// id=short-name (a value with spaces in double quotes). Every token gets
// a Person (its ID at least).
func ParseTokenFile(r io.Reader) (Tokens, People, error) {
	t, p := Tokens{}, People{}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields, err := splitTokenLine(line)
		if err != nil {
			return nil, nil, fmt.Errorf("token file line %d: %w", n, err)
		}
		var agents []string
		person := Person{}
		for _, f := range fields[min(1, len(fields)):] {
			k, v, ok := strings.Cut(f, "=")
			if !ok {
				agents = append(agents, f)
				continue
			}
			switch k {
			case "name":
				person.Name = v
			case "email":
				person.Email = v
			case "id":
				person.ID = v
			default:
				return nil, nil, fmt.Errorf("token file line %d: unknown field %q (want name=, email= or id=)", n, k)
			}
		}
		if len(fields) < 1 || len(agents) == 0 {
			return nil, nil, fmt.Errorf("token file line %d: want a token followed by the agents it may use (or *)", n)
		}
		// An empty token ("") would be what a request without one sends.
		if fields[0] == "" || slices.Contains(agents, "") {
			return nil, nil, fmt.Errorf("token file line %d: a token or an agent is empty (\"\"): give the token and the agent names it may use", n)
		}
		if person.ID == "" {
			person.ID = TokenID(fields[0])
		}
		t[fields[0]], p[fields[0]] = agents, person
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("read token file: %w", err)
	}
	return t, p, nil
}

// splitTokenLine splits a line at white space and commas, keeping what
// double quotes enclose (the quotes dropped) in one field.
func splitTokenLine(line string) ([]string, error) {
	var out []string
	var cur strings.Builder
	quoted, has := false, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted, has = !quoted, true
		case !quoted && (r == ' ' || r == '\t' || r == ','):
			if has {
				out = append(out, cur.String())
			}
			cur.Reset()
			has = false
		default:
			cur.WriteRune(r)
			has = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("a double quote is not closed")
	}
	if has {
		out = append(out, cur.String())
	}
	return out, nil
}

// Grant is what a request may do, set by an in-process authority (the
// console's session) instead of a bearer token: the agents it may use
// ("*" for all) and the person acting.
type Grant struct {
	Agents []string
	Person Person
}

// Allows reports whether g may use agent ("" for routes naming none).
func (g *Grant) Allows(agent string) bool { return g.allows(agent) }

func (g *Grant) allows(agent string) bool {
	return agent == "" || slices.Contains(g.Agents, "*") || slices.Contains(g.Agents, agent)
}

type grantKey struct{}

// WithGrant returns r with g as its authority: the routes answer it as
// they answer a bearer token scoped to g.Agents, and writes are made by
// g.Person. Only in-process code (the console) sets it; nothing in a
// request can.
func WithGrant(r *http.Request, g Grant) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), grantKey{}, &g))
}

// GrantOf returns the grant of ctx, nil when the request came with a
// bearer token or on the unix socket.
func GrantOf(ctx context.Context) *Grant {
	g, _ := ctx.Value(grantKey{}).(*Grant)
	return g
}

type personKey struct{}

// PersonOf returns the person acting in ctx (a console session's, or
// the holder of the request's bearer token), and whether there is one
// (none on the unix socket).
func PersonOf(ctx context.Context) (Person, bool) {
	if g := GrantOf(ctx); g != nil {
		return g.Person, true
	}
	p, ok := ctx.Value(personKey{}).(Person)
	return p, ok
}

// withPerson returns r with the holder of its bearer token as the
// person acting, when it has one.
func (h *handler) withPerson(r *http.Request) *http.Request {
	if GrantOf(r.Context()) != nil || h.opts.People == nil {
		return r
	}
	p, ok := h.opts.People.Person(h.token(r))
	if !ok {
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), personKey{}, p))
}

// Agents returns the agents token may use ("*" for all), and whether it
// is a token (compared as agents does).
func (t Tokens) Agents(token string) ([]string, bool) { return t.agents(token) }
