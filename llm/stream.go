package llm

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// readStream reads an answer sent as server-sent events: "data: {chunk}"
// lines, each with choices[0].delta.content, until "data: [DONE]". Other
// fields (event:, id:, comments) are skipped. alive is called on every
// line, so a stream that keeps talking is not cut by the idle timeout.
func (c *Client) readStream(body io.Reader, alive func()) (string, error) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), maxAnswerBytes)
	var answer strings.Builder
	var reason *string
	for sc.Scan() {
		alive()
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data:")
		if !ok {
			continue
		}
		data = strings.TrimSpace(data)
		if data == "[DONE]" {
			return c.finished(answer.String(), reason)
		}
		var chunk chatResponse
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			return "", c.streamError(fmt.Sprintf("a chunk of the stream is not JSON (%v): %q", err, c.redact(data[:min(len(data), 200)])))
		}
		if chunk.Error != nil {
			return "", c.errorOf(http.StatusOK, http.Header{}, chunk.Error)
		}
		for _, ch := range chunk.Choices {
			if ch.Delta != nil {
				answer.WriteString(ch.Delta.Content)
			}
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				reason = ch.FinishReason
			}
		}
		if answer.Len() > maxAnswerBytes {
			return "", c.streamError(fmt.Sprintf("the answer grew over %d bytes", maxAnswerBytes))
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	if reason != nil {
		// Some servers end with the finish chunk and close, without [DONE].
		return c.finished(answer.String(), reason)
	}
	return "", c.streamError("the stream ended before data: [DONE] or a finish_reason: the answer is incomplete")
}

func (c *Client) streamError(msg string) error {
	return &Error{Endpoint: c.shown, Status: http.StatusOK, Code: "stream", Message: msg}
}
