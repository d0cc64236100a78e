package mcp

import (
	"net/http"

	"github.com/quirehq/quire/daemon/api"
)

// MetadataPath is where OAuth protected resource metadata (RFC 9728)
// is served; MetadataPath+Path is the document of the resource Path.
const MetadataPath = "/.well-known/oauth-protected-resource"

// RegisterPath is where an OAuth client that found no authorization
// server tries dynamic client registration (the origin's /register).
const RegisterPath = "/register"

// tokenHelp says how a client authenticates: the message MCP clients
// show when they look for OAuth here.
const tokenHelp = "send the header Authorization: Bearer <token> with a token from the daemon's --token-file " +
	`(mcp-remote: --header "Authorization: Bearer ${QUIRE_TOKEN}"; a client's MCP configuration: "headers": {"Authorization": "Bearer ${QUIRE_TOKEN}"})`

// Mount serves MCP on mux: streamable HTTP at Path, the protected
// resource metadata that says which tokens it takes, and at RegisterPath
// the same words for a client that tries OAuth all the same (there is no
// authorization server: mcp-remote, finding none in the metadata, posts
// its registration to the origin and shows the answer's body).
func Mount(mux *http.ServeMux, b Backend, opts HTTPOptions) {
	mux.Handle(Path, Handler(b, opts))
	mux.HandleFunc("GET "+MetadataPath, serveMetadata)
	mux.HandleFunc("GET "+MetadataPath+Path, serveMetadata)
	mux.HandleFunc("POST "+RegisterPath, func(w http.ResponseWriter, r *http.Request) {
		fail(w, r, api.Errorf(api.CodeNotFound, "this Quire daemon has no OAuth authorization server, so no client registration: %s", tokenHelp))
	})
}

// resourceMetadata is the RFC 9728 document of Path. It names no
// authorization server: there is none.
type resourceMetadata struct {
	Resource               string   `json:"resource"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name"`
	// Description is not one of RFC 9728's names (it allows more):
	// what a person reading the document needs.
	Description string `json:"description"`
}

func serveMetadata(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	b, _ := api.Encode(resourceMetadata{
		Resource:               origin(r) + Path,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "Quire MCP server",
		Description:            "Quire's MCP server and local API take bearer tokens, not OAuth: " + tokenHelp + ". A token opens sessions of the agents its line in that file names.",
	})
	_, _ = w.Write(b)
}

// origin is the scheme and host r was sent to.
func origin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
