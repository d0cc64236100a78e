package daemon_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
)

const hookSecret = "It's a Secret to Everybody"

func sign(secret, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	return hex.EncodeToString(mac.Sum(nil))
}

// githubPush and giteaPush are push events as GitHub and Gitea send
// them (trimmed to the fields that name the repository and the ref).
func githubPush(cloneURL, ref string) string {
	return fmt.Sprintf(`{"ref":%q,"before":"0000000000000000000000000000000000000000","after":"1111111111111111111111111111111111111111",
"repository":{"id":1,"name":"bot","full_name":"acme/bot","private":true,"html_url":"https://github.example/acme/bot",
"clone_url":%q,"ssh_url":"git@github.example:acme/bot.git","git_url":"git://github.example/acme/bot.git"},
"pusher":{"name":"ines"},"commits":[]}`, ref, cloneURL)
}

func giteaPush(cloneURL, ref string) string {
	return fmt.Sprintf(`{"ref":%q,"before":"0000000000000000000000000000000000000000","after":"1111111111111111111111111111111111111111",
"compare_url":"","commits":[],"repository":{"id":7,"owner":{"login":"acme"},"name":"bot","full_name":"acme/bot",
"html_url":"https://gitea.example/acme/bot","ssh_url":"ssh://git@gitea.example:2222/acme/bot.git","clone_url":%q},
"pusher":{"login":"ines"},"sender":{"login":"ines"}}`, ref, cloneURL)
}

type hookReq struct {
	header map[string]string
	body   string
}

func githubHook(secret, body string) hookReq {
	return hookReq{map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": "sha256=" + sign(secret, body),
		"Content-Type": "application/json"}, body}
}

func giteaHook(secret, body string) hookReq {
	return hookReq{map[string]string{"X-Gitea-Event": "push", "X-Gitea-Signature": sign(secret, body),
		"Content-Type": "application/json"}, body}
}

// post sends a webhook to the daemon's TCP API (no bearer token) and
// returns the status and the body.
func post(t *testing.T, td *testDaemon, h hookReq) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+td.d.APIAddr()+daemon.HookPath, strings.NewReader(h.body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h.header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestWebhook: a follower that polls every hour, without a database,
// fetches when a correctly signed GitHub or Gitea push webhook names its
// upstream, and serves the new commit; nothing else makes it fetch.
func TestWebhook(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	host := startDaemon(t, daemon.Options{})
	host.push(t, newWorkTree(t, botFiles), "bot")
	fc := newFetchCounter(t, host.remote)
	up := fc.url + "/bot.git"
	f := startDaemon(t, daemon.Options{Upstream: up, Poll: time.Hour, WebhookSecret: []byte(hookSecret),
		APIListen: "127.0.0.1:0", Tokens: api.Tokens{"tok": {"*"}}})
	fc.settled(t)
	big := strings.Repeat(" ", 1<<20) + githubPush(up, "refs/heads/main")
	withOrigin := githubHook(hookSecret, githubPush(up, "refs/heads/main"))
	withOrigin.header["Origin"] = "https://evil.example"
	bothWrong := giteaHook(hookSecret, giteaPush(up, "refs/heads/main"))
	bothWrong.header["X-Hub-Signature-256"] = "sha256=" + sign("other", bothWrong.body)
	ping := githubHook(hookSecret, `{"zen":"Keep it logically awesome.","hook_id":1}`)
	ping.header["X-GitHub-Event"] = "ping"
	deployedCommit := func() string {
		p, err := f.c.Prompt(ctx, "bot", api.PromptRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return p.Commit
	}
	for _, tc := range []struct {
		name    string
		req     hookReq
		status  int
		fetches bool
		want    string // in the answer
	}{
		{"github", githubHook(hookSecret, githubPush(up, "refs/heads/main")), 202, true, "upstream:" + up},
		{"gitea", giteaHook(hookSecret, giteaPush(up, "refs/heads/live")), 202, true, "upstream:" + up},
		{"gitea, html_url form", giteaHook(hookSecret, giteaPush(strings.TrimSuffix(up, ".git")+"/", "refs/heads/main")), 202, true, "fetching"},
		{"github, wrong secret", githubHook("guess", githubPush(up, "refs/heads/main")), 401, false, "bad_signature"},
		{"gitea, wrong secret", giteaHook("guess", giteaPush(up, "refs/heads/main")), 401, false, "bad_signature"},
		{"one of two signatures wrong", bothWrong, 401, false, "X-Hub-Signature-256 does not match"},
		{"unsigned", hookReq{map[string]string{"X-GitHub-Event": "push"}, githubPush(up, "refs/heads/main")}, 401, false, "not signed"},
		{"signature not hex", hookReq{map[string]string{"X-Gitea-Signature": "zz"}, githubPush(up, "refs/heads/main")}, 401, false, "bad_signature"},
		{"github without sha256=", hookReq{map[string]string{"X-Hub-Signature-256": sign(hookSecret, githubPush(up, "refs/heads/main"))}, githubPush(up, "refs/heads/main")}, 401, false, "sha256="},
		{"signed, then altered", func() hookReq {
			h := githubHook(hookSecret, githubPush(up, "refs/heads/main"))
			h.body = strings.Replace(h.body, "ines", "eve!", 1)
			return h
		}(), 401, false, "bad_signature"},
		{"another repository", githubHook(hookSecret, strings.ReplaceAll(githubPush("https://github.example/acme/other.git", "refs/heads/main"), "acme/bot", "acme/other")), 202, false, `"triggered":[]`},
		{"a branch that is not deployed", githubHook(hookSecret, githubPush(up, "refs/heads/proposals/bot/1")), 202, false, "not deployed"},
		{"another event", func() hookReq {
			h := githubHook(hookSecret, githubPush(up, "refs/heads/main"))
			h.header["X-GitHub-Event"] = "issues"
			return h
		}(), 202, false, "ignored"},
		{"ping", ping, 200, false, "pong"},
		{"a commit deployed already", githubHook(hookSecret, strings.Replace(githubPush(up, "refs/heads/live"), strings.Repeat("1", 40), deployedCommit(), 1)), 202, false, "deployed already"},
		{"not JSON", githubHook(hookSecret, "ref=refs/heads/main"), 400, false, "bad_payload"},
		{"too large", githubHook(hookSecret, big), 413, false, "too_large"},
		{"from a web page", withOrigin, 403, false, "web pages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := host.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: "before " + tc.name})
			if err != nil {
				t.Fatal(err)
			}
			before := fc.fetches()
			status, body := post(t, f, tc.req)
			if status != tc.status || !strings.Contains(body, tc.want) {
				t.Fatalf("answer %d %s, want %d with %q", status, body, tc.status, tc.want)
			}
			if tc.fetches {
				served(t, f, w.Commit, 5*time.Second)
				return
			}
			time.Sleep(200 * time.Millisecond)
			if n := fc.fetches() - before; n != 0 {
				t.Fatalf("the follower fetched %d times", n)
			}
			if status >= 400 && status != 403 {
				var eb api.ErrorBody
				if err := json.Unmarshal([]byte(body), &eb); err != nil || eb.Error.Code == "" {
					t.Errorf("the error answer is not the API's error body: %s", body)
				}
			}
		})
	}
}

// TestWebhookOff: without --webhook-secret-file the route answers 403
// and says how to turn it on; with one, a webhook needs no bearer token
// but the API's other routes still do.
func TestWebhookOff(t *testing.T) {
	t.Parallel()
	host := startDaemon(t, daemon.Options{})
	host.push(t, newWorkTree(t, botFiles), "bot")
	up := host.remote + "/bot.git"
	off := startDaemon(t, daemon.Options{Upstream: up, Poll: time.Hour, APIListen: "127.0.0.1:0", Tokens: api.Tokens{"tok": {"*"}}})
	status, body := post(t, off, githubHook(hookSecret, githubPush(up, "refs/heads/main")))
	if status != http.StatusForbidden || !strings.Contains(body, "--webhook-secret-file") {
		t.Errorf("webhook without a secret: %d %s", status, body)
	}
	resp, err := http.Get("http://" + off.d.APIAddr() + "/v1/agents")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /v1/agents without a token: %d, want 401", resp.StatusCode)
	}
}

// BenchmarkWebhookServed: without a database, a write on a --repos host
// and the host's push webhook to a follower (polling every hour): the
// time from the write's acknowledgement until the follower deploys it,
// the webhook's delivery included.
func BenchmarkWebhookServed(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	host := startDaemon(b, daemon.Options{})
	host.push(b, newWorkTree(b, botFiles), "bot")
	up := host.remote + "/bot.git"
	f := startDaemon(b, daemon.Options{Upstream: up, Poll: time.Hour, WebhookSecret: []byte(hookSecret),
		APIListen: "127.0.0.1:0", Tokens: api.Tokens{"tok": {"*"}}})
	waitFor(b, "the follower to deploy", func() bool { _, err := f.c.Prompt(ctx, "bot", api.PromptRequest{}); return err == nil })
	deployed := f.deploys(b, ctx)
	hook := githubHook(hookSecret, githubPush(up, "refs/heads/live"))
	var ds []time.Duration
	b.ResetTimer()
	for i := range b.N {
		w, err := host.c.MemoryAppend(ctx, "bot", api.AppendRequest{Text: fmt.Sprintf("entry %d", i)})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		req, _ := http.NewRequest(http.MethodPost, "http://"+f.d.APIAddr()+daemon.HookPath, strings.NewReader(hook.body))
		for k, v := range hook.header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			b.Fatalf("webhook: %d", resp.StatusCode)
		}
		timeout := time.After(10 * time.Second)
	wait:
		for {
			select {
			case c := <-deployed:
				if c == w.Commit {
					break wait
				}
			case <-timeout:
				b.Fatalf("the follower did not deploy %s within 10 s", w.Commit)
			}
		}
		ds = append(ds, time.Since(start))
	}
	b.StopTimer()
	pct(b, ds)
}
