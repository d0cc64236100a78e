package api

import (
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/url"

	"github.com/quirehq/quire/prompt"
)

// FileEntry is one file of GET /v1/agents/{agent}/files.
type FileEntry struct {
	// Path is relative to the agent directory (users/<user>/… with ?user).
	Path string `json:"path"`
	Size int64  `json:"size"`
	ETag string `json:"etag"`
	// Kind is what the file is to Quire: config, persona, context,
	// per_user, memory, daily_log, skill or other.
	Kind string `json:"kind"`
	// Seed is set for a new user's USER.md and BOOTSTRAP.md, served from
	// the templates until their first write stores them.
	Seed bool `json:"seed,omitempty"`
}

// FileList is the answer of GET /v1/agents/{agent}/files.
type FileList struct {
	Files  []FileEntry `json:"files"`
	Commit string      `json:"commit"`
}

// Media types a file write's body may have.
const (
	mediaJSON     = "application/json" // {"content": …}
	mediaMarkdown = "text/markdown"    // the content itself
)

// writeContent reads a file write's content from r's body by its
// Content-Type: JSON {"content": …} or Markdown as it is. Any other type
// (none included: curl -d sends a form) is refused with 415 before the
// body is read, so a JSON body sent as a form never becomes a file.
func writeContent(r *http.Request) ([]byte, error) {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	switch {
	case err == nil && mt == mediaJSON:
		var fb FileBody
		if err := decode(r, &fb); err != nil {
			return nil, err
		}
		return []byte(fb.Content), nil
	case err == nil && mt == mediaMarkdown:
		b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxBodyBytes))
		if err != nil {
			return nil, Errorf(CodeTooLarge, "request body over %d bytes", MaxBodyBytes)
		}
		return b, nil
	}
	return nil, Errorf(CodeUnsupportedMediaType,
		"Content-Type %q: send application/json with {\"content\": …} or text/markdown with the content itself; nothing was written", ct)
}

// listFiles answers GET /v1/agents/{agent}/files.
func (h *handler) listFiles(w http.ResponseWriter, r *http.Request) error {
	res, err := h.b.ListFiles(r.Context(), r.PathValue("agent"), r.URL.Query().Get("user"))
	if err != nil {
		return err
	}
	return reply(w, res)
}

// deleteFile answers DELETE /v1/agents/{agent}/files/{path...}: like a
// write, it needs If-Match, and a persona file's deletion is a proposal.
func (h *handler) deleteFile(w http.ResponseWriter, r *http.Request) error {
	ifMatch := r.Header.Get("If-Match")
	if ifMatch == "" {
		return Errorf(CodePreconditionRequired, "send If-Match with the ETag of your last read (or * for whatever the file holds)")
	}
	ctx, err := idempotent(r)
	if err != nil {
		return err
	}
	res, err := h.b.DeleteFile(ctx, r.PathValue("agent"), r.URL.Query().Get("user"), r.PathValue("path"), ifMatch)
	if err != nil {
		return err
	}
	return reply(w, res)
}

// report answers GET /v1/agents/{agent}/report: the budget report of the
// prompt the query asks for (user, session, mode, channel, room), without
// the prompt.
func (h *handler) report(w http.ResponseWriter, r *http.Request) error {
	req := reportRequest(r.URL.Query())
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	b, err := h.b.PromptJSON(r.Context(), r.PathValue("agent"), req, body)
	if err != nil {
		return err
	}
	var res struct {
		Report json.RawMessage `json:"report"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = w.Write(append(res.Report, '\n'))
	return err
}

// reportRequest is the prompt request of a report's query.
func reportRequest(q url.Values) PromptRequest {
	return PromptRequest{User: q.Get("user"), Session: prompt.Session(q.Get("session")), Mode: prompt.Mode(q.Get("mode")),
		Channel: prompt.Channel(q.Get("channel")), Room: q.Get("room")}
}
