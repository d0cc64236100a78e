package daemon

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// guardHTTP refuses what a browser or a rebinding DNS name can send to a
// TCP listener on this machine: a Host that is not the listener's address
// (or localhost at its port, or a configured name), and any request that
// carries an Origin or Referer of another site (no legitimate client of
// the git endpoint or the local API sends them; the console's own pages
// send their own origin, which with the Host check is this listener).
// This is the defence of tailscale's local API.
func guardHTTP(next http.Handler, listen net.Addr, names []string) http.Handler {
	_, port, _ := net.SplitHostPort(listen.String())
	ip := net.ParseIP(hostOnly(listen.String()))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !sameOrigin(r.Header.Get("Origin"), r) || !sameOrigin(r.Header.Get("Referer"), r) {
			http.Error(w, "requests from other web pages are refused (Origin or Referer of another site)", http.StatusForbidden)
			return
		}
		if !allowedHost(r.Host, port, ip, names) {
			http.Error(w, fmt.Sprintf("host %q is not this daemon's address; add it with --allowed-host if it is a name of this machine", r.Host), http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// allowedHost: a configured name (any port), the listener's own IP, or a
// loopback name or address, at the listener's port.
func allowedHost(host, port string, listenIP net.IP, names []string) bool {
	h, p, err := net.SplitHostPort(host)
	if err != nil {
		h, p = strings.Trim(host, "[]"), ""
	}
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	for _, n := range names {
		if strings.EqualFold(n, h) || strings.EqualFold(n, host) {
			return true
		}
	}
	if p != port {
		return false
	}
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	if ip == nil {
		return false
	}
	return ip.IsLoopback() || (listenIP != nil && !listenIP.IsUnspecified() && ip.Equal(listenIP)) ||
		(listenIP != nil && listenIP.IsUnspecified() && isLocalAddress(ip))
}

// isLocalAddress reports whether ip is an address of this machine (for a
// listener on 0.0.0.0 or ::).
func isLocalAddress(ip net.IP) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// sameOrigin reports whether an Origin or Referer value is absent or
// names r's own origin (http or https, r's Host): the console's pages.
// "null" and anything unparsable are another origin.
func sameOrigin(v string, r *http.Request) bool {
	if v == "" {
		return true
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}
