package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// maxAnswerBytes bounds an answer read: files of an agent fit well
// within it.
const maxAnswerBytes = 8 << 20

// chatRequest is the body of POST /v1/chat/completions.
type chatRequest struct {
	Model       string    `json:"model"`
	Messages    []Message `json:"messages"`
	Stream      bool      `json:"stream,omitempty"`
	Temperature *float64  `json:"temperature,omitempty"`
	MaxTokens   int       `json:"max_tokens,omitempty"`
}

// chatResponse is the part of an answer (whole, or one chunk of a
// stream) the client reads.
type chatResponse struct {
	Choices []struct {
		Message *struct {
			Content *string `json:"content"`
		} `json:"message"`
		Delta *struct {
			Content string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Error *errorBody `json:"error"`
}

func (c *Client) requestBody(msgs []Message) ([]byte, error) {
	return json.Marshal(chatRequest{Model: c.opts.Model, Messages: msgs, Stream: c.opts.Stream,
		Temperature: c.opts.Temperature, MaxTokens: c.opts.MaxTokens})
}

// attempt makes one request and reads its answer within the timeouts.
func (c *Client) attempt(ctx context.Context, body []byte) (string, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	whole := time.AfterFunc(c.opts.Timeout, func() {
		cancel(fmt.Errorf("no complete answer within %v (the timeout of one attempt)", c.opts.Timeout))
	})
	defer whole.Stop()
	idle := time.AfterFunc(c.opts.IdleTimeout, func() {
		cancel(fmt.Errorf("the server was silent for %v (the idle timeout)", c.opts.IdleTimeout))
	})
	defer idle.Stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("POST %s: %w", c.shown, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.opts.Stream {
		req.Header.Set("Accept", "text/event-stream")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	if c.opts.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.opts.APIKey)
	}
	resp, err := c.opts.Client.Do(req)
	if err != nil {
		return "", c.transportError(ctx, err)
	}
	defer resp.Body.Close()
	idle.Reset(c.opts.IdleTimeout)
	if resp.StatusCode != http.StatusOK {
		return "", c.statusError(resp)
	}
	var answer string
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		answer, err = c.readStream(resp.Body, func() { idle.Reset(c.opts.IdleTimeout) })
	} else {
		answer, err = c.readWhole(resp)
	}
	if err != nil && ctx.Err() != nil {
		return "", c.transportError(ctx, err)
	}
	return answer, err
}

// transportError is a failure to get an answer: the network, or a
// timeout (the cause says which).
func (c *Client) transportError(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return fmt.Errorf("POST %s: %w", c.shown, cause)
	}
	return fmt.Errorf("POST %s: %s", c.shown, c.redact(err.Error()))
}

// readWhole reads a non-streamed answer.
func (c *Client) readWhole(resp *http.Response) (string, error) {
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxAnswerBytes {
		return "", c.badAnswer(resp, nil, fmt.Sprintf("an answer over %d bytes", maxAnswerBytes))
	}
	var cr chatResponse
	if err := json.Unmarshal(b, &cr); err != nil {
		return "", c.badAnswer(resp, b, "not JSON: "+err.Error())
	}
	if cr.Error != nil {
		return "", c.errorOf(resp.StatusCode, resp.Header, cr.Error)
	}
	if len(cr.Choices) == 0 || cr.Choices[0].Message == nil || cr.Choices[0].Message.Content == nil {
		return "", c.badAnswer(resp, b, "a JSON object without choices[0].message.content")
	}
	ch := cr.Choices[0]
	return c.finished(*ch.Message.Content, ch.FinishReason)
}

// finished checks how an answer ended: cut at the model's token limit
// is an error (a file cut in the middle is worse than none), and so is
// an empty answer.
func (c *Client) finished(answer string, reason *string) (string, error) {
	if reason != nil && *reason == "length" {
		return "", &Error{Endpoint: c.shown, Status: http.StatusOK, Code: "length",
			Message: "the answer was cut at the model's token limit (finish_reason \"length\"); raise the model's output limit (max_tokens, Ollama's num_predict) or use a model with a larger context"}
	}
	if strings.TrimSpace(answer) == "" {
		return "", &Error{Endpoint: c.shown, Status: http.StatusOK, Code: "empty", Message: "the model answered nothing"}
	}
	return answer, nil
}

// badAnswer is an answer that is not a chat completion.
func (c *Client) badAnswer(resp *http.Response, body []byte, what string) error {
	return &Error{Endpoint: c.shown, Status: resp.StatusCode, Code: "bad_answer",
		Message: fmt.Sprintf("answered %s (Content-Type %q), not a chat completion: is this an OpenAI-compatible /v1/chat/completions endpoint? %s",
			what, resp.Header.Get("Content-Type"), c.redact(excerpt(body)))}
}

// excerpt is the start of body, for a message.
func excerpt(body []byte) string {
	if len(body) == 0 {
		return ""
	}
	s := strings.ToValidUTF8(string(body[:min(len(body), 200)]), "?")
	if len(body) > 200 {
		s += "…"
	}
	return "The answer began: " + fmt.Sprintf("%q", s)
}
