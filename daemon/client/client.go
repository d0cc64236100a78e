// Package client is the Go client of the daemon's local API: the one
// `quire status`, `quire search` and the tests use. Its zero value talks
// to the daemon on the default unix socket.
package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"

	"github.com/quirehq/quire/daemon/api"
)

// Client calls the local API. The zero value dials api.DefaultSocket.
type Client struct {
	// Socket is the unix socket; "" means api.DefaultSocket.
	Socket string
	// BaseURL, when set (e.g. "http://127.0.0.1:7481"), reaches the API
	// over TCP instead of the socket.
	BaseURL string
	// Token is sent as a bearer token (TCP listeners require one).
	Token string
	// HTTPClient, when set, is used as is.
	HTTPClient *http.Client

	once sync.Once
	hc   *http.Client
}

func (c *Client) http() *http.Client {
	c.once.Do(func() {
		if c.HTTPClient != nil {
			c.hc = c.HTTPClient
			return
		}
		if c.BaseURL != "" {
			c.hc = &http.Client{}
			return
		}
		sock := c.Socket
		if sock == "" {
			sock = api.DefaultSocket(os.Getenv)
		}
		tr := &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", sock)
			},
			MaxIdleConnsPerHost: 64,
			// A prompt answer is tens of kilobytes: read it in one or
			// two system calls rather than in 4 KB pieces.
			ReadBufferSize: 64 << 10,
		}
		c.hc = &http.Client{Transport: tr}
	})
	return c.hc
}

func (c *Client) url(p string) string {
	if c.BaseURL != "" {
		return strings.TrimRight(c.BaseURL, "/") + p
	}
	return "http://quire" + p
}

// Do sends a request with a JSON body (nil for none) and decodes a JSON
// answer into out (nil to discard). An error answer is an *api.Error.
func (c *Client) Do(ctx context.Context, method, path string, header http.Header, body, out any) (http.Header, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url(path), rd)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if _, ok := body.([]byte); !ok && body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return nil, unreachable(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		var eb api.ErrorBody
		data, _ := io.ReadAll(resp.Body)
		if json.Unmarshal(data, &eb) != nil || eb.Error.Code == "" {
			eb.Error = api.Error{Code: "http", Message: strings.TrimSpace(string(data))}
		}
		eb.Error.Status = resp.StatusCode
		return resp.Header, &eb.Error
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return resp.Header, fmt.Errorf("decode %s %s: %w", method, path, err)
		}
	} else {
		_, _ = io.Copy(io.Discard, resp.Body)
	}
	return resp.Header, nil
}

func agentPath(agent, rest string) string { return "/v1/agents/" + url.PathEscape(agent) + rest }

// Status asks what the daemon has deployed and indexed.
func (c *Client) Status(ctx context.Context) (api.Status, error) {
	var out api.Status
	_, err := c.Do(ctx, http.MethodGet, "/v1/status", nil, nil, &out)
	return out, err
}

// Agents lists the deployed agents.
func (c *Client) Agents(ctx context.Context) ([]api.Agent, error) {
	var out api.AgentsResponse
	_, err := c.Do(ctx, http.MethodGet, "/v1/agents", nil, nil, &out)
	return out.Agents, err
}

// Prompt assembles an agent's system prompt.
func (c *Client) Prompt(ctx context.Context, agent string, req api.PromptRequest) (api.PromptResponse, error) {
	var out api.PromptResponse
	_, err := c.Do(ctx, http.MethodPost, agentPath(agent, "/prompt"), nil, req, &out)
	return out, err
}

// MemorySearch searches an agent's memory.
func (c *Client) MemorySearch(ctx context.Context, agent string, req api.SearchRequest) (api.SearchResponse, error) {
	var out api.SearchResponse
	_, err := c.Do(ctx, http.MethodPost, agentPath(agent, "/memory/search"), nil, req, &out)
	return out, err
}

// MemoryAppend appends an entry to today's daily log; the idempotency
// key ctx carries (api.WithIdempotencyKey) is sent with it.
func (c *Client) MemoryAppend(ctx context.Context, agent string, req api.AppendRequest) (api.WriteResponse, error) {
	var out api.WriteResponse
	_, err := c.Do(ctx, http.MethodPost, agentPath(agent, "/memory/append"), keyHeader(ctx, http.Header{}), req, &out)
	return out, err
}

// keyHeader adds the Idempotency-Key ctx carries to h.
func keyHeader(ctx context.Context, h http.Header) http.Header {
	if k := api.IdempotencyKey(ctx); k != "" {
		h.Set(api.IdempotencyKeyHeader, k)
	}
	return h
}

// FlushPlan asks whether to flush memory before compaction.
func (c *Client) FlushPlan(ctx context.Context, agent string, req api.FlushPlanRequest) (api.FlushPlan, error) {
	var out api.FlushPlan
	_, err := c.Do(ctx, http.MethodPost, agentPath(agent, "/memory/flush-plan"), nil, req, &out)
	return out, err
}

func filePath(agent, path, user string) string {
	p := agentPath(agent, "/files/"+escapePath(path))
	if user != "" {
		p += "?user=" + url.QueryEscape(user)
	}
	return p
}

func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

// ReadFile reads a workspace file (user "" for agent-level files).
func (c *Client) ReadFile(ctx context.Context, agent, path, user string) (api.File, error) {
	var out api.File
	_, err := c.Do(ctx, http.MethodGet, filePath(agent, path, user), nil, nil, &out)
	return out, err
}

// WriteFile writes a workspace file; ifMatch is the ETag of the last read
// ("*" to create, "" sends no If-Match). The idempotency key ctx carries
// is sent with it.
func (c *Client) WriteFile(ctx context.Context, agent, path, user, ifMatch string, content []byte) (api.WriteResponse, error) {
	var out api.WriteResponse
	h := keyHeader(ctx, http.Header{})
	if ifMatch != "" {
		h.Set("If-Match", ifMatch)
	}
	h.Set("Content-Type", "text/markdown")
	_, err := c.Do(ctx, http.MethodPut, filePath(agent, path, user), h, content, &out)
	return out, err
}

// ListFiles lists an agent's files (user "") or a user's.
func (c *Client) ListFiles(ctx context.Context, agent, user string) (api.FileList, error) {
	var out api.FileList
	p := agentPath(agent, "/files")
	if user != "" {
		p += "?user=" + url.QueryEscape(user)
	}
	_, err := c.Do(ctx, http.MethodGet, p, nil, nil, &out)
	return out, err
}

// DeleteFile deletes a workspace file; ifMatch is the ETag of the last
// read ("*": whatever it holds). The idempotency key ctx carries is sent
// with it.
func (c *Client) DeleteFile(ctx context.Context, agent, path, user, ifMatch string) (api.WriteResponse, error) {
	var out api.WriteResponse
	h := keyHeader(ctx, http.Header{})
	if ifMatch != "" {
		h.Set("If-Match", ifMatch)
	}
	_, err := c.Do(ctx, http.MethodDelete, filePath(agent, path, user), h, nil, &out)
	return out, err
}

// SkillsSearch searches the skills an agent may use.
func (c *Client) SkillsSearch(ctx context.Context, agent string, req api.SkillsSearchRequest) (api.SkillsResponse, error) {
	var out api.SkillsResponse
	_, err := c.Do(ctx, http.MethodPost, agentPath(agent, "/skills/search"), nil, req, &out)
	return out, err
}

// Skills lists the skills an agent may use for user.
func (c *Client) Skills(ctx context.Context, agent, user string) (api.SkillsResponse, error) {
	var out api.SkillsResponse
	p := agentPath(agent, "/skills")
	if user != "" {
		p += "?user=" + url.QueryEscape(user)
	}
	_, err := c.Do(ctx, http.MethodGet, p, nil, nil, &out)
	return out, err
}

// Skill returns one skill's body.
func (c *Client) Skill(ctx context.Context, agent, name, user string) (api.SkillBody, error) {
	var out api.SkillBody
	p := agentPath(agent, "/skills/"+url.PathEscape(name))
	if user != "" {
		p += "?user=" + url.QueryEscape(user)
	}
	_, err := c.Do(ctx, http.MethodGet, p, nil, nil, &out)
	return out, err
}

// Events streams the daemon's events to fn until ctx is done, fn returns
// false, or the connection ends.
func (c *Client) Events(ctx context.Context, fn func(api.Event) bool) error {
	body, err := c.openEvents(ctx)
	if err != nil {
		return err
	}
	defer body.Close()
	return readEvents(ctx, body, fn)
}

// Subscribe opens the daemon's event stream and returns once the daemon
// answered: from then on, every event it publishes is delivered on the
// channel (a slow reader misses events, as GET /v1/events says). The
// channel is closed when ctx is done or the stream ends.
func (c *Client) Subscribe(ctx context.Context) (<-chan api.Event, error) {
	body, err := c.openEvents(ctx)
	if err != nil {
		return nil, err
	}
	ch := make(chan api.Event, 256)
	go func() {
		defer close(ch)
		defer body.Close()
		_ = readEvents(ctx, body, func(e api.Event) bool {
			select {
			case ch <- e:
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()
	return ch, nil
}

// openEvents sends GET /v1/events and returns the stream once the
// daemon answered it (it subscribes before it answers).
func (c *Client) openEvents(ctx context.Context) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url("/v1/events"), nil)
	if err != nil {
		return nil, err
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return nil, unreachable(err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		var eb api.ErrorBody
		_ = json.NewDecoder(resp.Body).Decode(&eb)
		eb.Error.Status = resp.StatusCode
		return nil, &eb.Error
	}
	return resp.Body, nil
}

// readEvents hands each event of the stream r to fn until fn returns
// false or the stream ends.
func readEvents(ctx context.Context, r io.Reader, fn func(api.Event) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var e api.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return fmt.Errorf("decode event: %w", err)
		}
		if !fn(e) {
			return nil
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return sc.Err()
}

// unreachable says that the daemon did not answer, without the request
// line net/http puts first (Get "http://quire/v1/status": …): the
// caller names the socket or URL.
func unreachable(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("no answer from the daemon: %w", err)
}
