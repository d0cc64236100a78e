package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
)

// openAPIRequest is a request of TestOpenAPIServed.
type openAPIRequest struct {
	body   string
	header map[string]string
	// status, when set, is the documented error this daemon answers
	// (one without a model: drafts_test.go has the successes).
	status int
}

// openAPIRequests is a request for every operation of openapi.json, by
// operationId: what a client would send, with the deployed agent bot.
var openAPIRequests = map[string]openAPIRequest{
	"getStatus":         {},
	"listAgents":        {},
	"assemblePrompt":    {body: `{"user":"ann","channel":"dm","tools":[{"name":"calendar","description":"Books rooms."}]}`},
	"searchMemory":      {body: `{"query":"wifi password","limit":3}`},
	"appendMemory":      {body: `{"user":"ann","text":"Prefers oat milk."}`},
	"planMemoryFlush":   {body: `{"total_tokens":120000,"context_window":128000,"cycle":1}`},
	"readFile":          {},
	"writeFile":         {body: "# Notes\n", header: map[string]string{"If-Match": "*", "Content-Type": "text/markdown"}},
	"deleteFile":        {header: map[string]string{"If-Match": "*"}},
	"listFiles":         {},
	"report":            {},
	"searchSkills":      {body: `{"query":"greet a guest"}`},
	"listSkills":        {},
	"getSkill":          {},
	"summonAgent":       {body: `{"description":"a night porter"}`, status: http.StatusNotImplemented},
	"consolidateMemory": {body: `{"days":7}`, status: http.StatusNotImplemented},
	"streamEvents":      {},
	"getMetrics":        {},
	"getOpenAPI":        {},
	"listProposals":     {},
	"approveProposal":   {}, // proposal 1, opened by the test
	"rejectProposal":    {}, // proposal 2
	"agentHistory":      {},
	"agentDeploys":      {},
	"promptDiff":        {}, // its body names the deployed commit: set by the test
	"agentTemplate":     {},
	"receiveGitWebhook": {body: `{"zen":"Keep it logically awesome."}`, header: map[string]string{
		"X-GitHub-Event": "ping", "X-Hub-Signature-256": "sha256=" + sign(hookSecret, `{"zen":"Keep it logically awesome."}`)}},
}

// TestOpenAPIServed: the daemon serves its OpenAPI description on the
// socket and, without a token, on --api-listen; every operation it
// describes is a route of the daemon (the webhook included, which is not
// in package api's route table), answers one of the statuses the
// document lists for it, and a success answer has the documented shape.
func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, daemon.Options{APIListen: "127.0.0.1:0", Tokens: api.Tokens{"tok": {"*"}}, WebhookSecret: []byte(hookSecret)})
	files := map[string]string{"memory/old.md": "# Old notes\n"} // deleteFile's
	for k, v := range botFiles {
		files[k] = v
	}
	td.push(t, newWorkTree(t, files), "bot")
	requests := openProposalsFor(t, td)

	code, header, body := td.raw(t, http.MethodGet, "/v1/openapi.json", nil, "")
	if code != http.StatusOK || header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /v1/openapi.json on the socket: %d %s", code, header)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	tcp := "http://" + td.d.APIAddr()
	resp, err := http.Get(tcp + "/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(b) != body {
		t.Errorf("GET /v1/openapi.json on TCP without a token: %d, want 200 and the socket's document", resp.StatusCode)
	}
	if resp, err := http.Get(tcp + "/v1/status"); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /v1/status on TCP without a token: %v %v, want 401", resp, err)
	}

	socket := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", td.c.Socket)
	}}}
	v := &validator{t: t, doc: doc}
	paths, _ := doc["paths"].(map[string]any)
	seen := map[string]bool{}
	for path, item := range paths {
		for method, o := range item.(map[string]any) {
			op := o.(map[string]any)
			id := op["operationId"].(string)
			seen[id] = true
			rq, ok := requests[id]
			if !ok {
				t.Errorf("%s %s: no request for operation %s in openAPIRequests", method, path, id)
				continue
			}
			target := strings.NewReplacer("{agent}", "bot", "{path}", "memory/notes.md", "{name}", "greeting").Replace(path)
			if method == "get" && strings.Contains(path, "{path}") {
				target = strings.Replace(target, "memory/notes.md", "MEMORY.md", 1)
			}
			if id == "agentTemplate" {
				target = strings.Replace(target, "MEMORY.md", "SOUL.md", 1)
			}
			target = strings.NewReplacer("{id}/approve", "1/approve", "{id}/reject", "2/reject").Replace(target)
			if method == "delete" {
				target = strings.Replace(target, "memory/notes.md", "memory/old.md", 1)
			}
			name := strings.ToUpper(method) + " " + target
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			req, _ := http.NewRequestWithContext(ctx, strings.ToUpper(method), "http://quire"+target, strings.NewReader(rq.body))
			for k, v := range rq.header {
				req.Header.Set(k, v)
			}
			resp, err := socket.Do(req)
			if err != nil {
				cancel()
				t.Errorf("%s: %v", name, err)
				continue
			}
			status := fmt.Sprint(resp.StatusCode)
			responses := op["responses"].(map[string]any)
			var answer []byte
			if id != "streamEvents" { // an endless stream: its headers are enough
				answer, _ = io.ReadAll(resp.Body)
			}
			resp.Body.Close()
			cancel()
			if resp.StatusCode == http.StatusMethodNotAllowed || (resp.StatusCode == http.StatusNotFound && bytes.Contains(answer, []byte("no route"))) {
				t.Errorf("%s: no such route: %d %s", name, resp.StatusCode, answer)
				continue
			}
			r, documented := responses[status].(map[string]any)
			if !documented {
				t.Errorf("%s: answered %s (%s), which openapi.json does not list for %s", name, status, answer, id)
				continue
			}
			if resp.StatusCode == rq.status {
				continue
			}
			if resp.StatusCode >= 300 {
				t.Errorf("%s: %s %s, want a success for this request", name, status, answer)
				continue
			}
			content, _ := v.resolve(r)["content"].(map[string]any)
			if resp.StatusCode == http.StatusNoContent && content == nil && len(answer) == 0 {
				continue // documented without a body, sent without one
			}
			mt := strings.TrimSpace(strings.Split(resp.Header.Get("Content-Type"), ";")[0])
			media, ok := content[mt].(map[string]any)
			if !ok {
				t.Errorf("%s: Content-Type %q is not among the documented %v", name, mt, keys(content))
				continue
			}
			if mt != "application/json" || id == "getOpenAPI" {
				continue
			}
			var value any
			if err := json.Unmarshal(answer, &value); err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			v.check(name, value, media["schema"].(map[string]any))
		}
	}
	for id := range openAPIRequests {
		if !seen[id] {
			t.Errorf("openAPIRequests has %s, which openapi.json does not describe", id)
		}
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// validator checks a JSON value against a schema of the document: the
// subset of JSON Schema openapi.json uses ($ref, type, properties,
// required, items, enum). It is strict: a property the schema does not
// name is an error, so an answer cannot carry undocumented fields.
type validator struct {
	t   *testing.T
	doc map[string]any
}

func (v *validator) resolve(schema map[string]any) map[string]any {
	for schema["$ref"] != nil {
		var cur any = v.doc
		for _, tok := range strings.Split(strings.TrimPrefix(schema["$ref"].(string), "#/"), "/") {
			cur = cur.(map[string]any)[tok]
		}
		schema = cur.(map[string]any)
	}
	return schema
}

func (v *validator) check(where string, value any, schema map[string]any) {
	schema = v.resolve(schema)
	if enum, ok := schema["enum"].([]any); ok && !slices.Contains(enum, value) {
		v.t.Errorf("%s: %v is not one of %v", where, value, enum)
	}
	var ok bool
	switch schema["type"] {
	case "object":
		var m map[string]any
		if m, ok = value.(map[string]any); ok {
			props, _ := schema["properties"].(map[string]any)
			for k, x := range m {
				p, named := props[k].(map[string]any)
				if !named {
					v.t.Errorf("%s: property %q is not in the schema", where, k)
					continue
				}
				v.check(where+"."+k, x, p)
			}
			req, _ := schema["required"].([]any)
			for _, k := range req {
				if _, present := m[k.(string)]; !present {
					v.t.Errorf("%s: required %q is missing", where, k)
				}
			}
		}
	case "array":
		var a []any
		if a, ok = value.([]any); ok {
			for i, x := range a {
				v.check(fmt.Sprintf("%s[%d]", where, i), x, schema["items"].(map[string]any))
			}
		}
	case "string":
		_, ok = value.(string)
	case "boolean":
		_, ok = value.(bool)
	case "number":
		_, ok = value.(float64)
	case "integer":
		f, isNum := value.(float64)
		ok = isNum && f == float64(int64(f))
	default:
		ok = true
	}
	if !ok {
		v.t.Errorf("%s: %v (%T) is not a %v", where, value, value, schema["type"])
	}
}

// openProposalsFor opens proposals 1 and 2 of bot (for the approve and
// reject operations) and returns openAPIRequests with the prompt diff's
// body naming the deployed commit.
func openProposalsFor(t *testing.T, td *testDaemon) map[string]openAPIRequest {
	t.Helper()
	ctx := context.Background()
	for _, f := range []string{"SOUL.md", "TOOLS.md"} {
		cur, err := td.c.ReadFile(ctx, "bot", f, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := td.c.WriteFile(ctx, "bot", f, "", cur.ETag, []byte("# Proposed\n\nA change.\n")); err != nil {
			t.Fatal(err)
		}
	}
	agents, err := td.c.Agents(ctx)
	if err != nil || len(agents) == 0 {
		t.Fatalf("agents: %v", err)
	}
	reqs := maps.Clone(openAPIRequests)
	c := agents[0].Commit
	reqs["promptDiff"] = openAPIRequest{body: `{"from":"` + c + `","to":"` + c + `"}`}
	return reqs
}
