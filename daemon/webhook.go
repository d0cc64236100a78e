package daemon

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/quirehq/quire/daemon/api"
)

// HookPath is the route of push webhooks (GitHub, Gitea): a push to a
// followed upstream makes this daemon fetch it at once instead of at the
// next --poll.
const HookPath = "/v1/hooks/git"

// hookBodyLimit bounds a webhook's body (GitHub caps payloads at 25 MB,
// but a push's is a few KiB; its commit list is ignored).
const hookBodyLimit = 1 << 20

// hookAnswer is the JSON body of a webhook answer that is not an error.
type hookAnswer struct {
	// Triggered lists the sources that fetch now.
	Triggered []string `json:"triggered"`
	Message   string   `json:"message"`
}

// pushPayload is what a push webhook's body says that matters here
// (GitHub's and Gitea's push events name these fields alike).
type pushPayload struct {
	Ref string `json:"ref"`
	// After is the commit the ref moved to.
	After      string `json:"after"`
	Repository struct {
		FullName string `json:"full_name"`
		CloneURL string `json:"clone_url"`
		SSHURL   string `json:"ssh_url"`
		HTMLURL  string `json:"html_url"`
		GitURL   string `json:"git_url"`
	} `json:"repository"`
}

// webhook is the push webhook of followed upstreams (POST
// /v1/hooks/git): a signed push event makes the followers of the pushed
// repository fetch at once.
type webhook struct {
	// secret is Options.WebhookSecret; empty turns the route off.
	secret  []byte
	sources *sourceSet
	metrics *metrics
	log     *slog.Logger
}

// ServeHTTP serves POST /v1/hooks/git. It authenticates by the HMAC-SHA256
// of the body with Options.WebhookSecret (GitHub's X-Hub-Signature-256:
// sha256=<hex>, Gitea's X-Gitea-Signature: <hex>; every signature sent
// must match), not by a bearer token; the TCP listener's Host and Origin
// guard still applies. Answers: 202 with the sources that fetch now
// (none when no followed upstream is the pushed repository, the ref is
// not one the daemon deploys from, or the pushed commit is deployed
// already), 200 to a ping, 401 for a missing or
// wrong signature, 403 when no secret is configured, 413 beyond 1 MiB.
func (wh *webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	status, body := wh.answer(w, r)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
	wh.metrics.observeRequest("POST "+HookPath, status, time.Since(start))
}

func hookError(code api.Code, format string, args ...any) (int, any) {
	e := api.Errorf(code, format, args...)
	return api.StatusOf(e), api.ErrorBody{Error: *e}
}

func (wh *webhook) answer(w http.ResponseWriter, r *http.Request) (int, any) {
	secret := wh.secret
	if len(secret) == 0 {
		return hookError(api.CodeWebhooksOff,
			"webhooks are off: start quire serve with --webhook-secret-file PATH and give the webhook the same secret")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, hookBodyLimit))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return hookError(api.CodeTooLarge, "a webhook body is at most %d bytes", hookBodyLimit)
		}
		return hookError(api.CodeBadBody, "read the body: %v", err)
	}
	if err := verifyHook(secret, r.Header, body); err != nil {
		wh.log.Warn("refused a webhook", "remote", r.RemoteAddr, "err", err)
		return hookError(api.CodeBadSignature, "%v", err)
	}
	event := firstHeader(r.Header, "X-GitHub-Event", "X-Gitea-Event", "X-Gogs-Event")
	switch event {
	case "ping":
		return http.StatusOK, hookAnswer{Triggered: []string{}, Message: "pong: the signature matches; push events make the followed upstream fetch"}
	case "", "push":
	default:
		return http.StatusAccepted, hookAnswer{Triggered: []string{}, Message: fmt.Sprintf("%s events are ignored: only push events make a fetch", event)}
	}
	var p pushPayload
	if err := json.Unmarshal(body, &p); err != nil {
		return hookError(api.CodeBadPayload, "the body is not a push event's JSON: %v", err)
	}
	srcs := wh.sourcesOf(p)
	if len(srcs) == 0 {
		return http.StatusAccepted, hookAnswer{Triggered: []string{},
			Message: fmt.Sprintf("no followed upstream is %s: nothing to fetch", p.name())}
	}
	if !deployedRef(p.Ref) {
		return http.StatusAccepted, hookAnswer{Triggered: []string{},
			Message: fmt.Sprintf("%s is not deployed (main and live are): nothing to fetch", p.Ref)}
	}
	ids := make([]string, 0, len(srcs))
	for _, s := range srcs {
		// The daemons' own pushes to live come back as webhooks too:
		// a commit the deployment already holds needs no fetch.
		if s.knows(p.After) && s.holds(p.After) {
			continue
		}
		s.up.trigger()
		ids = append(ids, s.id())
	}
	if len(ids) == 0 {
		return http.StatusAccepted, hookAnswer{Triggered: ids, Message: fmt.Sprintf("%s is deployed already: nothing to fetch", p.After)}
	}
	wh.log.Info("webhook: fetching the upstream", "repository", p.name(), "ref", p.Ref, "sources", ids)
	return http.StatusAccepted, hookAnswer{Triggered: ids, Message: "fetching"}
}

// verifyHook checks the body's signatures: at least one of GitHub's and
// Gitea's headers, and every one sent matches, compared in constant time.
func verifyHook(secret []byte, h http.Header, body []byte) error {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	want := mac.Sum(nil)
	checked := 0
	for _, name := range []string{"X-Hub-Signature-256", "X-Gitea-Signature"} {
		v := strings.TrimSpace(h.Get(name))
		if v == "" {
			continue
		}
		if name == "X-Hub-Signature-256" {
			var ok bool
			if v, ok = strings.CutPrefix(v, "sha256="); !ok {
				return fmt.Errorf("%s must be sha256=<hex HMAC-SHA256 of the body>", name)
			}
		}
		got, err := hex.DecodeString(v)
		if err != nil || !hmac.Equal(got, want) {
			return fmt.Errorf("%s does not match the body: the webhook's secret is not the one in --webhook-secret-file", name)
		}
		checked++
	}
	if checked == 0 {
		return errors.New("the webhook is not signed: give it the secret of --webhook-secret-file (GitHub sends X-Hub-Signature-256, Gitea X-Gitea-Signature)")
	}
	return nil
}

func firstHeader(h http.Header, names ...string) string {
	for _, n := range names {
		if v := strings.TrimSpace(h.Get(n)); v != "" {
			return strings.ToLower(v)
		}
	}
	return ""
}

// deployedRef reports whether a push to ref can change what a follower
// deploys: main (merged into live), live, or master (the fallback of a
// repository without main); "" (a payload without ref) counts as one.
func deployedRef(ref string) bool {
	switch ref {
	case "", "refs/heads/main", "refs/heads/live", "refs/heads/master":
		return true
	}
	return false
}

func (p pushPayload) name() string {
	for _, n := range []string{p.Repository.FullName, p.Repository.CloneURL, p.Repository.HTMLURL, p.Repository.SSHURL} {
		if n != "" {
			return n
		}
	}
	return "(no repository in the payload)"
}

// sourcesOf returns the followed upstreams that are the payload's
// repository: one of its URLs is the followed URL (compared by repoKey),
// or the followed URL ends with its full name (owner/name).
func (wh *webhook) sourcesOf(p pushPayload) []*source {
	var keys []string
	for _, u := range []string{p.Repository.CloneURL, p.Repository.SSHURL, p.Repository.HTMLURL, p.Repository.GitURL} {
		if k := repoKey(u); k != "" {
			keys = append(keys, k)
		}
	}
	full := strings.ToLower(strings.Trim(p.Repository.FullName, "/"))
	var out []*source
	for _, s := range wh.sources.all() {
		if s.up == nil {
			continue
		}
		k := repoKey(s.name)
		match := full != "" && strings.HasSuffix(k, "/"+full)
		for _, pk := range keys {
			match = match || pk == k
		}
		if match {
			out = append(out, s)
		}
	}
	return out
}

// repoKey reduces a repository URL to host/path in lower case, without
// scheme, user, password, port, ".git" or trailing slashes, so that the
// forms one repository goes by compare equal:
// https://u:t@GitHub.com/Acme/Bot.git, git@github.com:acme/bot and
// ssh://git@github.com:22/acme/bot.git are all github.com/acme/bot. A
// local path stays a (cleaned) path.
func repoKey(u string) string {
	u = strings.TrimSpace(u)
	if u == "" {
		return ""
	}
	var host, p string
	if i := strings.Index(u, "://"); i >= 0 {
		parsed, err := url.Parse(u)
		if err != nil {
			return strings.ToLower(u)
		}
		host, p = parsed.Hostname(), parsed.Path
	} else if colon := strings.Index(u, ":"); colon > 0 && !strings.Contains(u[:colon], "/") {
		// scp-like: [user@]host:path
		host, p = u[:colon], u[colon+1:]
		if at := strings.LastIndex(host, "@"); at >= 0 {
			host = host[at+1:]
		}
	} else {
		p = u
	}
	p = strings.TrimRight(path.Clean("/"+p), "/")
	p = strings.TrimSuffix(p, ".git")
	return strings.ToLower(host + p)
}
