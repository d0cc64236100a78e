package daemon

import (
	"net/http"
	"os/user"
	"time"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/console"
)

// CodeRoute is the route of the unix socket that issues a one-time
// login code for the console (`quire ui`): only the daemon's own user
// reaches the socket.
const CodeRoute = "/ui/api/code"

// LoginCode is the answer of POST /ui/api/code on the unix socket.
type LoginCode struct {
	Code    string    `json:"code"`
	URL     string    `json:"url,omitempty"`
	Expires time.Time `json:"expires"`
}

// tcpHandler is what a TCP listener serves: the console at /ui/ in front
// of the local API with tokens.
func (d *Daemon) tcpHandler(tokens api.Tokens) http.Handler {
	return console.Handler(d.Handler(tokens), console.Options{Tokens: tokens, People: d.opts.People, Sessions: d.sessions,
		Overview: d.overview, Subscribe: d.events.subscribe, Logger: component(d.opts.Logger, "console")})
}

// issueCode answers POST /ui/api/code on the unix socket: a code that
// signs in once, within console.CodeTTL, for every agent, as the user
// running the daemon.
func (d *Daemon) issueCode(w http.ResponseWriter, r *http.Request) {
	id := "local"
	if u, err := user.Current(); err == nil {
		id = u.Username
	}
	c := d.sessions.Code(api.Grant{Agents: []string{"*"}, Person: api.Person{ID: id}})
	res := LoginCode{Code: c, Expires: d.opts.Now().Add(console.CodeTTL).UTC()}
	addr := d.uiAddr
	if addr == "" {
		addr = d.apiAddr
	}
	if addr != "" {
		res.URL = "http://" + addr + "/ui/login?code=" + c
	}
	b, _ := api.Encode(res)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b)
}
