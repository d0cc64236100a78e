package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quirehq/quire/prompt"
)

// servedOutside are the operations openapi.json describes that the
// daemon serves beside this package's route table (package daemon's
// TestOpenAPIServed proves they are real routes).
var servedOutside = map[string]bool{
	"POST /v1/hooks/git": true, // daemon.HookPath: the push webhook
}

// schemasOutside are the schemas of those operations, which package
// daemon checks against its own types.
var schemasOutside = map[string]bool{"HookAnswer": true, "PushEvent": true}

// wire names the Go types each route decodes its JSON body into and
// encodes its answer from (nil: no JSON body, or an answer that is not a
// wire type). Every route must have an entry, so a new route cannot be
// added without saying what it carries.
var wire = map[string]struct{ req, resp any }{
	"GET /v1/status":                                 {nil, Status{}},
	"GET /v1/agents":                                 {nil, AgentsResponse{}},
	"POST /v1/agents/{agent}/prompt":                 {PromptRequest{}, PromptResponse{}},
	"POST /v1/agents/{agent}/memory/search":          {SearchRequest{}, SearchResponse{}},
	"POST /v1/agents/{agent}/memory/append":          {AppendRequest{}, WriteResponse{}},
	"POST /v1/agents/{agent}/memory/flush-plan":      {FlushPlanRequest{}, FlushPlan{}},
	"GET /v1/agents/{agent}/files":                   {nil, FileList{}},
	"GET /v1/agents/{agent}/files/{path...}":         {nil, File{}},
	"PUT /v1/agents/{agent}/files/{path...}":         {FileBody{}, WriteResponse{}},
	"DELETE /v1/agents/{agent}/files/{path...}":      {nil, WriteResponse{}},
	"GET /v1/agents/{agent}/report":                  {nil, prompt.Report{}},
	"POST /v1/agents/{agent}/skills/search":          {SkillsSearchRequest{}, SkillsResponse{}},
	"GET /v1/agents/{agent}/skills":                  {nil, SkillsResponse{}},
	"GET /v1/agents/{agent}/skills/{name}":           {nil, SkillBody{}},
	"GET /v1/agents/{agent}/proposals":               {nil, []Proposal{}},
	"POST /v1/agents/{agent}/proposals/{id}/approve": {nil, Approved{}},
	"POST /v1/agents/{agent}/proposals/{id}/reject":  {nil, nil},
	"GET /v1/agents/{agent}/history":                 {nil, []HistoryEntry{}},
	"GET /v1/agents/{agent}/deploys":                 {nil, []Deploy{}},
	"POST /v1/agents/{agent}/prompt/diff":            {PromptDiffRequest{}, PromptDiff{}},
	"GET /v1/agents/{agent}/templates/{path...}":     {nil, nil}, // the template's text
	"POST /v1/agents/{agent}/summon":                 {SummonRequest{}, ProposalResponse{}},
	"POST /v1/agents/{agent}/consolidate":            {ConsolidateRequest{}, ProposalResponse{}},
	"GET /v1/events":                                 {nil, Event{}}, // one per line
	"GET /metrics":                                   {nil, nil},     // Prometheus text
	"GET /v1/openapi.json":                           {nil, nil},     // this document
}

// openAPIDocument is openapi.json decoded, with JSON Pointer lookups.
type openAPIDocument map[string]any

func loadOpenAPI(t *testing.T) openAPIDocument {
	t.Helper()
	var doc openAPIDocument
	dec := json.NewDecoder(bytes.NewReader(openAPIDoc))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("openapi.json is not JSON: %v", err)
	}
	return doc
}

// pointer resolves a local reference ("#/components/schemas/Status").
func (d openAPIDocument) pointer(ref string) (any, error) {
	rest, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, fmt.Errorf("$ref %q is not local to the document (#/…)", ref)
	}
	var cur any = map[string]any(d)
	for _, tok := range strings.Split(rest, "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("$ref %q: %q is not in an object", ref, tok)
		}
		if cur, ok = m[tok]; !ok {
			return nil, fmt.Errorf("$ref %q: no %q", ref, tok)
		}
	}
	return cur, nil
}

// deref follows $ref until an object without one.
func (d openAPIDocument) deref(t *testing.T, v any) map[string]any {
	t.Helper()
	m, _ := v.(map[string]any)
	for i := 0; m != nil && m["$ref"] != nil; i++ {
		target, err := d.pointer(m["$ref"].(string))
		if err != nil || i > 10 {
			t.Fatalf("%v (or a $ref loop)", err)
		}
		m, _ = target.(map[string]any)
	}
	return m
}

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }

var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// operations returns "METHOD /path" → operation object.
func (d openAPIDocument) operations() map[string]map[string]any {
	ops := map[string]map[string]any{}
	for p, item := range obj(d["paths"]) {
		for _, m := range httpMethods {
			if op := obj(obj(item)[m]); op != nil {
				ops[strings.ToUpper(m)+" "+p] = op
			}
		}
	}
	return ops
}

// openAPIPath turns a route pattern's path into OpenAPI's template:
// {path...} is {path}.
func openAPIPath(pattern string) string {
	return strings.ReplaceAll(pattern, "...}", "}")
}

// TestOpenAPIShape: the document is OpenAPI 3.1 shaped, every $ref
// resolves, every path parameter is declared, and every operation has an
// id, a summary and a success answer.
func TestOpenAPIShape(t *testing.T) {
	doc := loadOpenAPI(t)
	if doc["openapi"] != "3.1.0" {
		t.Errorf(`openapi = %v, want "3.1.0"`, doc["openapi"])
	}
	info := obj(doc["info"])
	if info["title"] == nil || info["title"] == "" || info["version"] == nil || info["version"] == "" {
		t.Errorf("info needs a title and a version: %v", info)
	}
	for _, k := range []string{"paths", "components"} {
		if obj(doc[k]) == nil {
			t.Errorf("%s is missing or not an object", k)
		}
	}
	for _, k := range []string{"schemas", "securitySchemes"} {
		if obj(obj(doc["components"])[k]) == nil {
			t.Errorf("components.%s is missing", k)
		}
	}
	// Every $ref, anywhere, resolves.
	var walk func(where string, v any)
	walk = func(where string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"]; ok {
				s, _ := ref.(string)
				if _, err := doc.pointer(s); err != nil {
					t.Errorf("%s: %v", where, err)
				}
			}
			for k, x := range v {
				walk(where+"/"+k, x)
			}
		case []any:
			for i, x := range v {
				walk(where+"/"+strconv.Itoa(i), x)
			}
		}
	}
	walk("#", map[string]any(doc))

	ids := map[string]string{}
	template := regexp.MustCompile(`\{([^}]+)\}`)
	for name, op := range doc.operations() {
		id, _ := op["operationId"].(string)
		if id == "" {
			t.Errorf("%s: no operationId", name)
		} else if other, dup := ids[id]; dup {
			t.Errorf("%s: operationId %q is %s's too", name, id, other)
		}
		ids[id] = name
		if s, _ := op["summary"].(string); s == "" {
			t.Errorf("%s: no summary", name)
		}
		ok := false
		for status := range obj(op["responses"]) {
			ok = ok || strings.HasPrefix(status, "2")
		}
		if !ok {
			t.Errorf("%s: no 2xx response", name)
		}
		inPath := map[string]bool{}
		params, _ := op["parameters"].([]any)
		for _, p := range params {
			p := doc.deref(t, p)
			if p["in"] == "path" {
				inPath[p["name"].(string)] = true
				if p["required"] != true {
					t.Errorf("%s: path parameter %v is not required", name, p["name"])
				}
			}
		}
		_, path, _ := strings.Cut(name, " ")
		var want []string
		for _, m := range template.FindAllStringSubmatch(path, -1) {
			want = append(want, m[1])
			if !inPath[m[1]] {
				t.Errorf("%s: path parameter {%s} is not declared", name, m[1])
			}
		}
		if len(want) != len(inPath) {
			t.Errorf("%s: declares path parameters %v, the path has %v", name, inPath, want)
		}
	}
}

// TestOpenAPIRoutes: the document's operations are exactly the route
// table's (and the routes the daemon adds beside it).
func TestOpenAPIRoutes(t *testing.T) {
	doc := loadOpenAPI(t)
	ops := doc.operations()
	table := map[string]bool{}
	for _, rt := range routes {
		method, path, _ := strings.Cut(rt.pattern, " ")
		name := method + " " + openAPIPath(path)
		table[name] = true
		if ops[name] == nil {
			t.Errorf("route %s is in the route table but not in openapi.json (add it to paths, and to docs/api.md)", rt.pattern)
		}
	}
	for name := range ops {
		if !table[name] && !servedOutside[name] {
			t.Errorf("openapi.json describes %s, which is no route of the daemon", name)
		}
	}
	for name := range servedOutside {
		if table[name] {
			t.Errorf("%s is in the route table: take it out of servedOutside", name)
		}
	}
}

// TestOpenAPIAuth: the document says which routes need a token, as
// authorize decides: all but the document itself (and the webhook,
// which is signed instead).
func TestOpenAPIAuth(t *testing.T) {
	doc := loadOpenAPI(t)
	global, _ := doc["security"].([]any)
	if len(global) != 2 || len(obj(global[0])) != 0 || obj(global[1])["bearer"] == nil {
		t.Errorf("security = %v, want [{}, {bearer: []}]: a token on TCP, none on the socket", doc["security"])
	}
	if obj(obj(obj(doc["components"])["securitySchemes"])["bearer"])["scheme"] != "bearer" {
		t.Error("components.securitySchemes.bearer is not an HTTP bearer scheme")
	}
	for name, op := range doc.operations() {
		sec, overrides := op["security"].([]any)
		public := name == openAPIRoute || servedOutside[name]
		if public != (overrides && len(sec) == 0) {
			t.Errorf("%s: security %v; want [] exactly when the route takes no bearer token", name, op["security"])
		}
		if public {
			continue
		}
		if _, ok := obj(op["responses"])["401"]; !ok {
			t.Errorf("%s: no 401 answer, yet it needs a token on TCP", name)
		}
		if strings.Contains(name, "{agent}") || name == "GET /metrics" {
			if _, ok := obj(op["responses"])["403"]; !ok {
				t.Errorf("%s: no 403 answer for a token that may not use the agent", name)
			}
		}
	}
	// And the handler agrees: the document needs no token, the rest do.
	h := Handler(nil, Options{Tokens: Tokens{"t": {"*"}}})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequestWithContext(context.Background(), "GET", "/v1/openapi.json", nil))
	if rec.Code != http.StatusOK || !bytes.Equal(rec.Body.Bytes(), openAPIDoc) || rec.Header().Get("Content-Type") != "application/json" {
		t.Errorf("GET /v1/openapi.json without a token: %d %s, want 200 and the document", rec.Code, rec.Header())
	}
}

// TestOpenAPIErrorCodes: ErrorCode lists every code of the table with
// its status, and every error answer of an operation lists codes whose
// status (StatusOf) is the answer's and carries an ErrorBody.
func TestOpenAPIErrorCodes(t *testing.T) {
	doc := loadOpenAPI(t)
	ec := obj(obj(obj(doc["components"])["schemas"])["ErrorCode"])
	if ec == nil {
		t.Fatal("components.schemas.ErrorCode is missing")
	}
	enum := map[string]bool{}
	for _, c := range ec["enum"].([]any) {
		enum[c.(string)] = true
	}
	docStatus := obj(ec["x-quire-statuses"])
	for code, status := range statuses {
		if !enum[string(code)] {
			t.Errorf("code %q is not in ErrorCode's enum", code)
		}
		if got := fmt.Sprint(docStatus[string(code)]); got != strconv.Itoa(status) {
			t.Errorf("ErrorCode x-quire-statuses[%q] = %s, StatusOf says %d", code, got, status)
		}
		if !strings.Contains(ec["description"].(string), "`"+string(code)+"` ("+strconv.Itoa(status)+")") {
			t.Errorf("ErrorCode's description does not explain %q (%d)", code, status)
		}
	}
	if len(enum) != len(statuses) || len(docStatus) != len(statuses) {
		t.Errorf("ErrorCode lists %d codes and %d statuses; the table has %d codes", len(enum), len(docStatus), len(statuses))
	}
	for name, op := range doc.operations() {
		for status, r := range obj(op["responses"]) {
			n, err := strconv.Atoi(status)
			if err != nil {
				t.Errorf("%s: response %q is not a status", name, status)
				continue
			}
			if n < 400 {
				continue
			}
			r := doc.deref(t, r)
			codes, _ := r["x-quire-codes"].([]any)
			if len(codes) == 0 {
				t.Errorf("%s %d: no x-quire-codes", name, n)
			}
			for _, c := range codes {
				if s, ok := statuses[Code(c.(string))]; !ok || s != n {
					t.Errorf("%s %d: code %v is answered with %d, not %d", name, n, c, s, n)
				}
				if !strings.Contains(r["description"].(string), "`"+c.(string)+"`") {
					t.Errorf("%s %d: the description does not explain %v", name, n, c)
				}
			}
			schema := obj(obj(obj(r["content"])["application/json"])["schema"])
			if schema["$ref"] != "#/components/schemas/ErrorBody" {
				t.Errorf("%s %d: the body is not an ErrorBody", name, n)
			}
		}
	}
}

// TestOpenAPISchemas: the request and answer schemas of every route have
// exactly the JSON fields of the Go types the handlers decode and encode
// (names, JSON types, what is always sent), so a field added to a wire
// type without being documented fails here.
func TestOpenAPISchemas(t *testing.T) {
	doc := loadOpenAPI(t)
	ops := doc.operations()
	c := &schemaCheck{t: t, doc: doc, seen: map[string]reflect.Type{}}
	for _, rt := range routes {
		w, ok := wire[rt.pattern]
		if !ok {
			t.Errorf("route %s has no entry in wire: name the Go types of its body and answer", rt.pattern)
			continue
		}
		method, path, _ := strings.Cut(rt.pattern, " ")
		op := ops[method+" "+openAPIPath(path)]
		if op == nil {
			continue // TestOpenAPIRoutes says so
		}
		if w.req != nil {
			body := doc.deref(t, op["requestBody"])
			schema := obj(obj(obj(body["content"])["application/json"])["schema"])
			if body["required"] != true || schema == nil {
				t.Errorf("%s: no required application/json request body", rt.pattern)
			} else {
				c.match(rt.pattern+" body", schema, reflect.TypeOf(w.req), false)
			}
		} else if op["requestBody"] != nil {
			t.Errorf("%s: the document has a request body, the handler reads none", rt.pattern)
		}
		if w.resp != nil {
			var schema map[string]any
			for status, r := range obj(op["responses"]) {
				if strings.HasPrefix(status, "2") {
					for _, mt := range obj(doc.deref(t, r)["content"]) {
						schema = obj(obj(mt)["schema"])
					}
				}
			}
			if schema == nil {
				t.Errorf("%s: no schema for the answer", rt.pattern)
				continue
			}
			c.match(rt.pattern+" answer", schema, reflect.TypeOf(w.resp), true)
		}
	}
	for name := range wire {
		if !slices.ContainsFunc(routes, func(r route) bool { return r.pattern == name }) {
			t.Errorf("wire has %s, which is no route", name)
		}
	}
	c.match("error answers", map[string]any{"$ref": "#/components/schemas/ErrorBody"}, reflect.TypeOf(ErrorBody{}), true)
	for name := range obj(obj(doc["components"])["schemas"]) {
		if c.seen[name] == nil && !schemasOutside[name] {
			t.Errorf("schema %s is used by no route's body or answer", name)
		}
	}
}

// schemaCheck compares schemas with Go types.
type schemaCheck struct {
	t    *testing.T
	doc  openAPIDocument
	seen map[string]reflect.Type // component schema → the Go type it describes
}

var timeType = reflect.TypeOf(time.Time{})

// match checks schema against t. An answer's object schema must require
// exactly the fields always sent (those without omitempty); a request's
// must refuse unknown properties, as the decoder does.
func (c *schemaCheck) match(where string, schema map[string]any, t reflect.Type, answer bool) {
	if ref, ok := schema["$ref"].(string); ok {
		name, isSchema := strings.CutPrefix(ref, "#/components/schemas/")
		if isSchema {
			if prev := c.seen[name]; prev != nil {
				if prev != t {
					c.t.Errorf("%s: schema %s describes %v here and %v elsewhere", where, name, t, prev)
				}
				return // checked already
			}
			c.seen[name] = t
			where = name
		}
		schema = c.doc.deref(c.t, schema)
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType:
		c.wantType(where, schema, "string")
		if schema["format"] != "date-time" {
			c.t.Errorf("%s: a time is format date-time, not %v", where, schema["format"])
		}
	case t.Kind() == reflect.Struct:
		c.wantType(where, schema, "object")
		c.matchStruct(where, schema, t, answer)
	case t.Kind() == reflect.Slice:
		c.wantType(where, schema, "array")
		items := obj(schema["items"])
		if items == nil {
			c.t.Errorf("%s: an array without items", where)
			return
		}
		c.match(where+"[]", items, t.Elem(), answer)
	case t.Kind() == reflect.String:
		c.wantType(where, schema, "string")
	case t.Kind() == reflect.Bool:
		c.wantType(where, schema, "boolean")
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		c.wantType(where, schema, "integer")
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		c.wantType(where, schema, "number")
	default:
		c.t.Errorf("%s: no rule for Go type %v", where, t)
	}
}

func (c *schemaCheck) wantType(where string, schema map[string]any, want string) {
	switch got := schema["type"].(type) {
	case string:
		if got == want {
			return
		}
	case []any:
		if slices.Contains(got, any(want)) {
			return
		}
	}
	c.t.Errorf("%s: type %v, want %q", where, schema["type"], want)
}

func (c *schemaCheck) matchStruct(where string, schema map[string]any, t reflect.Type, answer bool) {
	fields := jsonFields(t)
	props := obj(schema["properties"])
	required := map[string]bool{}
	if r, ok := schema["required"].([]any); ok {
		for _, x := range r {
			required[x.(string)] = true
		}
	}
	var names []string
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		f := fields[name]
		p := obj(props[name])
		if p == nil {
			c.t.Errorf("%s: Go field %s.%s (JSON %q) is not in the schema's properties: document it", where, t.Name(), f.goName, name)
			continue
		}
		if answer && required[name] == f.omitEmpty {
			if f.omitEmpty {
				c.t.Errorf("%s: %q is required, but %s.%s is omitempty (not always sent)", where, name, t.Name(), f.goName)
			} else {
				c.t.Errorf("%s: %q is always sent: list it in required", where, name)
			}
		}
		c.match(where+"."+name, p, f.typ, answer)
	}
	for name := range props {
		if _, ok := fields[name]; !ok {
			c.t.Errorf("%s: property %q is no JSON field of %v", where, name, t)
		}
	}
	for name := range required {
		if _, ok := fields[name]; !ok {
			c.t.Errorf("%s: required %q is no JSON field of %v", where, name, t)
		}
	}
	if !answer && schema["additionalProperties"] != false {
		c.t.Errorf("%s: a request body with unknown fields is refused: set additionalProperties false", where)
	}
}

type jsonField struct {
	goName    string
	typ       reflect.Type
	omitEmpty bool
}

// jsonFields returns the JSON fields encoding/json gives t's values,
// embedded structs flattened.
func jsonFields(t reflect.Type) map[string]jsonField {
	out := map[string]jsonField{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		omit := slices.Contains(strings.Split(opts, ","), "omitempty") || slices.Contains(strings.Split(opts, ","), "omitzero")
		out[name] = jsonField{goName: f.Name, typ: f.Type, omitEmpty: omit}
	}
	return out
}

// TestOpenAPIDocs: docs/api.md, the reference for people, has a section
// for every route and explains every error code.
func TestOpenAPIDocs(t *testing.T) {
	b, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	for _, rt := range routes {
		method, path, _ := strings.Cut(rt.pattern, " ")
		if !strings.Contains(md, "### `"+method+" "+openAPIPath(path)+"`") {
			t.Errorf("docs/api.md has no section ### `%s %s`", method, openAPIPath(path))
		}
	}
	for name := range servedOutside {
		if !strings.Contains(md, "### `"+name+"`") {
			t.Errorf("docs/api.md has no section ### `%s`", name)
		}
	}
	// Each route's section names the codes its error answers list, but
	// those the Routes preamble says every route may answer.
	common := map[string]bool{"unauthorized": true, "forbidden": true, "unknown_agent": true, "internal": true}
	doc := loadOpenAPI(t)
	for name, op := range doc.operations() {
		_, section, ok := strings.Cut(md, "### `"+name+"`")
		if !ok {
			continue // said above
		}
		section, _, _ = strings.Cut(section, "\n### ")
		section, _, _ = strings.Cut(section, "\n## ")
		for _, r := range obj(op["responses"]) {
			codes, _ := doc.deref(t, r)["x-quire-codes"].([]any)
			for _, c := range codes {
				if !common[c.(string)] && !strings.Contains(section, "`"+c.(string)+"`") {
					t.Errorf("docs/api.md's section on %s does not name the error %s", name, c)
				}
			}
		}
	}
	for code, status := range statuses {
		if !strings.Contains(md, "| `"+string(code)+"` | "+strconv.Itoa(status)+" |") {
			t.Errorf("docs/api.md's table of codes has no row | `%s` | %d |", code, status)
		}
	}
}

// TestNoRouteNamesTheReference: a 404 for an unknown route says where
// the routes are.
func TestNoRouteNamesTheReference(t *testing.T) {
	rec := httptest.NewRecorder()
	Handler(nil, Options{}).ServeHTTP(rec, httptest.NewRequestWithContext(context.Background(), "GET", "/v1/nothing", nil))
	var eb ErrorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil {
		t.Fatal(err)
	}
	want := "no route GET /v1/nothing; the local API's routes are in GET /v1/openapi.json and in docs/api.md of Quire's repository"
	if rec.Code != http.StatusNotFound || eb.Error.Code != CodeNotFound || eb.Error.Message != want {
		t.Errorf("%d %+v, want 404 not_found %q", rec.Code, eb.Error, want)
	}
}

// TestFilePathSlashes: a file path reaches the backend whole whether its
// slashes are sent as they are or escaped (%2F), as client generators
// escape path parameters.
func TestFilePathSlashes(t *testing.T) {
	for _, target := range []string{
		"/v1/agents/bot/files/memory/2026-11-22.md",
		"/v1/agents/bot/files/memory%2F2026-11-22.md",
	} {
		var got string
		h := Handler(pathRecorder{got: &got}, Options{})
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequestWithContext(context.Background(), "GET", target, nil))
		if rec.Code != http.StatusOK || got != "memory/2026-11-22.md" {
			t.Errorf("GET %s: %d, the backend read %q", target, rec.Code, got)
		}
	}
}

// pathRecorder is a Backend whose ReadFile records the path it is given.
type pathRecorder struct {
	Backend
	got *string
}

func (p pathRecorder) ReadFile(_ context.Context, _, _, path string) (File, error) {
	*p.got = path
	return File{Path: path, ETag: `"x"`}, nil
}
