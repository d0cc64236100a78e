package api

import (
	_ "embed"
	"net/http"
)

// openAPIDoc is the OpenAPI 3.1 description of the local API, served at
// GET /v1/openapi.json. docs/api.md is its reference for people;
// openapi_test.go checks it against the route table, the codes and
// their statuses, and the wire types' JSON fields.
//
//go:embed openapi.json
var openAPIDoc []byte

// openAPIRoute is the one route of the table that takes no token: the
// document holds no secrets (it is the same for every daemon of a
// version, and in the repository), and client generators fetch it
// without credentials.
const openAPIRoute = "GET /v1/openapi.json"

func (h *handler) openAPI(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, openAPIDoc)
	return nil
}
