package mcp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
)

// TestUnauthorizedPointsAtMetadata: a 401 on /mcp names the protected
// resource metadata (RFC 9728), which says what tokens are taken and
// names no authorization server; a client that registers for OAuth all
// the same reads the same words.
func TestUnauthorizedPointsAtMetadata(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, daemon.Options{APIListen: "127.0.0.1:0", Tokens: api.Tokens{"tok-alpha": {"alpha"}}})
	td.deploy(t, "alpha", "alpha", alphaFiles)
	origin := "http://" + td.d.APIAddr()
	for _, c := range []struct {
		token, challenge string
	}{
		{"", `Bearer resource_metadata="` + origin + `/.well-known/oauth-protected-resource/mcp"`},
		{"wrong", `Bearer resource_metadata="` + origin + `/.well-known/oauth-protected-resource/mcp", error="invalid_token"`},
	} {
		hc := http.DefaultClient
		if c.token != "" {
			hc = &http.Client{Transport: bearer{c.token, http.DefaultTransport}}
		}
		resp, err := hc.Do(mcpRequest(origin+"/mcp?agent=alpha", "", []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != c.challenge || !strings.Contains(string(body), `"code":"unauthorized"`) {
			t.Errorf("token %q: %s, WWW-Authenticate %q, %s; want 401 with %s", c.token, resp.Status, resp.Header.Get("WWW-Authenticate"), body, c.challenge)
		}
	}

	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		resp, err := http.Get(origin + path)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		err = json.NewDecoder(resp.Body).Decode(&doc)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s, %v", path, resp.Status, err)
		}
		methods, _ := json.Marshal(doc["bearer_methods_supported"])
		desc, _ := doc["description"].(string)
		if doc["resource"] != origin+"/mcp" || string(methods) != `["header"]` || !strings.Contains(desc, "--token-file") || doc["authorization_servers"] != nil {
			t.Errorf("GET %s: %v; want resource %s/mcp, bearer in the header, --token-file named, no authorization server", path, doc, origin)
		}
	}

	resp, err := http.Post(origin+"/register", "application/json", strings.NewReader(`{"redirect_uris":["http://localhost:1/cb"]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "this Quire daemon has no OAuth authorization server, so no client registration: send the header Authorization: Bearer <token> with a token from the daemon's --token-file") {
		t.Errorf("POST /register: %s %s", resp.Status, body)
	}
}
