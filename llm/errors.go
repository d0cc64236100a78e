package llm

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Error is an answer of the endpoint that is not a chat completion: an
// error status with OpenAI's error body ({"error":{"message","type",
// "code"}}) or without one, an answer cut short, or one that is not the
// expected JSON. It never holds the API key.
type Error struct {
	Endpoint string
	Status   int
	// Type and Code are the error body's ("invalid_request_error",
	// "invalid_api_key"), or the client's own ("bad_answer", "length",
	// "empty", "stream").
	Type, Code string
	Message    string
	// RetryAfter is the wait the server asked for (429, 503).
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "POST %s", e.Endpoint)
	if e.Status != http.StatusOK && e.Status != 0 {
		fmt.Fprintf(&b, ": %d %s", e.Status, http.StatusText(e.Status))
	}
	if e.Code != "" {
		fmt.Fprintf(&b, " (%s)", e.Code)
	}
	fmt.Fprintf(&b, ": %s", e.Message)
	if hint := e.hint(); hint != "" {
		b.WriteString("; " + hint)
	}
	return b.String()
}

// hint says what to do about the statuses that have one answer.
func (e *Error) hint() string {
	switch e.Status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return "check the key (--llm-key-file, QUIRE_LLM_KEY or OPENAI_API_KEY)"
	case http.StatusNotFound:
		return "check --llm-url (the server's chat-completions URL) and --llm-model (a model the server has)"
	case http.StatusTooManyRequests:
		if e.RetryAfter > 0 {
			return fmt.Sprintf("the server asks to wait %v", e.RetryAfter)
		}
		return "the server's rate limit or quota is reached"
	}
	return ""
}

// Temporary reports whether a retry may pass: 429 and the 5xx statuses
// of an overloaded or restarting server.
func (e *Error) Temporary() bool {
	switch e.Status {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// errorBody is OpenAI's error object; code may be a string or a number
// (llama.cpp sends the status).
type errorBody struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// statusError reads an answer with an error status.
func (c *Client) statusError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var body struct {
		Error json.RawMessage `json:"error"`
	}
	var eb errorBody
	if json.Unmarshal(b, &body) == nil && len(body.Error) > 0 {
		if json.Unmarshal(body.Error, &eb) != nil {
			var s string // {"error": "model not found"} (Ollama)
			if json.Unmarshal(body.Error, &s) == nil {
				eb.Message = s
			}
		}
	}
	if eb.Message == "" {
		eb.Message = "the answer holds no OpenAI error body. " + excerpt(b)
	}
	return c.errorOf(resp.StatusCode, resp.Header, &eb)
}

// errorOf is the *Error of an error body.
func (c *Client) errorOf(status int, h http.Header, eb *errorBody) *Error {
	code := strings.Trim(string(eb.Code), `"`)
	if code == "null" {
		code = ""
	}
	return &Error{Endpoint: c.shown, Status: status, Type: eb.Type, Code: c.redact(code),
		Message: c.redact(eb.Message), RetryAfter: retryAfter(h.Get("Retry-After"), time.Now())}
}

// retryAfter parses a Retry-After header: seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// redact takes the API key out of s: a server may echo it in a message.
func (c *Client) redact(s string) string {
	if k := c.opts.APIKey; len(k) >= 4 {
		s = strings.ReplaceAll(s, k, "[redacted]")
	}
	return s
}
