package gitsync

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"time"
)

// Remote is a git remote: its URL, which never holds a password or a
// token, and apart from it the credential that reaches it. Every way of
// printing a Remote (String, any fmt verb, JSON, text, slog) shows the URL
// alone, with the values of its query string as *** (a host may take a
// token there), so a status, a log line or an error cannot show the
// credential whoever builds it. The credential goes only to what authenticates: the
// git CLI, through a credential helper that reads it from the process's
// environment (never from its command line), and the native send-pack's
// requests, as basic auth.
//
// Without a credential, git's own credential helpers (git config
// credential.helper) answer for the git CLI, as for any git command.
type Remote struct {
	url string // no password; no user information at all for http(s)
	// cred is nil when the remote has no credential of its own and its
	// URL held no user information. Behind a pointer, it is not even
	// reached by fmt printing a struct that holds a Remote unexported.
	cred *credential
	// raw is the URL as given when its query string has values (which
	// url shows as ***): what git is given. Behind a pointer for the
	// same reason as cred.
	raw *string
}

// credential is what authenticates to a remote, and what the URL held.
// Its strings never print.
type credential struct {
	user, password secret // "" and "": none
	// urlUser is the user name the URL held (a user name, or a token
	// given as one); inURL says the URL held user information.
	urlUser secret
	inURL   bool
}

// secret is a string that never prints.
type secret string

func (secret) String() string               { return "***" }
func (secret) GoString() string             { return `"***"` }
func (secret) MarshalText() ([]byte, error) { return []byte("***"), nil }
func (secret) LogValue() slog.Value         { return slog.StringValue("***") }

// DefaultCredentialUser is the user name sent with a credential that is
// a token alone (and a URL without a user name): a quire host, GitHub,
// GitLab and Gitea take any user name with a token.
const DefaultCredentialUser = "quire"

// ParseRemote reads a remote's URL (http(s), ssh, git, file or a path, or
// git's scp-like user@host:path). User information in an http(s) URL is
// taken out of the URL and kept as the credential (CredentialInURL
// reports it; a user name alone is sent with an empty password, as git
// does when no credential helper has one: https://TOKEN@host/… works
// so); a password in another URL is dropped (git's ssh has no use for
// it). The error never quotes the URL.
func ParseRemote(raw string) (Remote, error) {
	if raw == "" {
		return Remote{}, errors.New("no URL")
	}
	if strings.ContainsFunc(raw, isControl) {
		return Remote{}, errors.New("the URL holds a control character")
	}
	if !strings.Contains(raw, "://") {
		return Remote{url: raw}, nil // a path or scp-like: no password there
	}
	r, err := parseURLRemote(raw)
	return r.withQueryHidden(), err
}

// parseURLRemote is ParseRemote for a URL with a scheme.
func parseURLRemote(raw string) (Remote, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, which may hold a password
		}
		return Remote{}, fmt.Errorf("not a URL: %v", err)
	}
	if u.User == nil {
		return Remote{url: raw}, nil
	}
	name := u.User.Username()
	pw, hasPW := u.User.Password()
	if u.Scheme != "http" && u.Scheme != "https" {
		// ssh://git@host/…: the user name is how to log in, not a secret.
		u.User = url.User(name)
		if !hasPW {
			return Remote{url: u.String()}, nil
		}
		return Remote{url: u.String(), cred: &credential{inURL: true}}, nil
	}
	u.User = nil
	return Remote{url: u.String(), cred: &credential{user: secret(name), password: secret(pw), urlUser: secret(name), inURL: true}}, nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// WithCredential returns r with the credential s: "USER:TOKEN", or a
// token alone (sent with the user name r's URL held, else
// DefaultCredentialUser). It replaces a credential the URL held. The
// error never quotes s.
func (r Remote) WithCredential(s string) (Remote, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return r, errors.New("the credential is empty")
	}
	if strings.ContainsFunc(s, isControl) {
		return r, errors.New("the credential holds a line break or another control character: give one line, USER:TOKEN or a token")
	}
	c := credential{}
	if r.cred != nil {
		c = *r.cred
	}
	user, token, ok := strings.Cut(s, ":")
	if !ok {
		user, token = DefaultCredentialUser, s
		if c.urlUser != "" {
			user = string(c.urlUser) // http://follower@host/… with the token apart
		}
	}
	if user == "" || token == "" {
		return r, errors.New("the credential has an empty user name or token: give USER:TOKEN or a token")
	}
	c.user, c.password = secret(user), secret(token)
	r.cred = &c
	return r, nil
}

// HasCredential reports whether r carries a credential of its own.
func (r Remote) HasCredential() bool {
	return r.cred != nil && (r.cred.user != "" || r.cred.password != "")
}

// CredentialInURL reports whether the URL r was parsed from held user
// information (taken out of it, or dropped): the URL was given where
// others may read it (a command line, a configuration file).
func (r Remote) CredentialInURL() bool { return r.cred != nil && r.cred.inURL }

// IsZero reports whether r is no remote.
func (r Remote) IsZero() bool { return r.url == "" }

// String is the URL without a credential.
func (r Remote) String() string { return r.url }

// GoString is the URL without a credential, quoted.
func (r Remote) GoString() string { return fmt.Sprintf("gitsync.Remote(%q)", r.url) }

// Format prints the URL without a credential for every verb (%q quotes
// it): fmt never reaches the fields.
func (r Remote) Format(f fmt.State, verb rune) {
	if verb == 'q' {
		fmt.Fprintf(f, "%q", r.url)
		return
	}
	io.WriteString(f, r.url)
}

// MarshalText is the URL without a credential (JSON too).
func (r Remote) MarshalText() ([]byte, error) { return []byte(r.url), nil }

// LogValue is the URL without a credential.
func (r Remote) LogValue() slog.Value { return slog.StringValue(r.url) }

// target is the URL that git and the HTTP client are given: the printed
// one, unless its query has values (a host may take a token there).
func (r Remote) target() string {
	if r.raw != nil {
		return *r.raw
	}
	return r.url
}

// withQueryHidden returns r with each value of its URL's query string
// shown as *** (?token=*** keeps the name) and the URL as given kept
// apart for git.
func (r Remote) withQueryHidden() Remote {
	base, query, ok := strings.Cut(r.url, "?")
	if !ok || query == "" {
		return r
	}
	query, fragment, hasFragment := strings.Cut(query, "#")
	parts := strings.Split(query, "&")
	for i, p := range parts {
		if name, _, ok := strings.Cut(p, "="); ok {
			parts[i] = name + "=***"
		}
	}
	raw := r.url
	r.url, r.raw = base+"?"+strings.Join(parts, "&"), &raw
	if hasFragment {
		r.url += "#" + fragment
	}
	return r
}

// queryValues are the values of r's query string, as written and
// unescaped, for scrub.
func (r Remote) queryValues() []string {
	if r.raw == nil {
		return nil
	}
	_, query, _ := strings.Cut(*r.raw, "?")
	query, _, _ = strings.Cut(query, "#")
	var out []string
	for _, p := range strings.Split(query, "&") {
		_, v, ok := strings.Cut(p, "=")
		if !ok || v == "" {
			continue
		}
		out = append(out, v)
		if u, err := url.QueryUnescape(v); err == nil && u != v {
			out = append(out, u)
		}
	}
	return out
}

// httpCredential is the user name and password for basic auth to r
// (ok false without a credential).
func (r Remote) httpCredential() (user, password string, ok bool) {
	if !r.HasCredential() {
		return "", "", false
	}
	return string(r.cred.user), string(r.cred.password), true
}

// setAuth sets req's basic auth from r's credential, if any.
func (r Remote) setAuth(req *http.Request) {
	if user, pw, ok := r.httpCredential(); ok {
		req.SetBasicAuth(user, pw)
	}
}

// Environment variables through which the git CLI's credential helper
// (credentialHelper) gets r's credential.
const (
	credUserEnv     = "QUIRE_GIT_CREDENTIAL_USERNAME"
	credPasswordEnv = "QUIRE_GIT_CREDENTIAL_PASSWORD"
)

// credentialHelper is a git credential helper that answers get with the
// credential in the environment of git (credUserEnv, credPasswordEnv),
// and store and erase with nothing: the credential is never written
// anywhere. A shell function: its command line holds no secret.
const credentialHelper = `!f() { test "$1" = get || exit 0; while read -r l && test -n "$l"; do :; done; ` +
	`printf 'username=%s\npassword=%s\n' "$` + credUserEnv + `" "$` + credPasswordEnv + `"; }; f`

// gitAuth returns the git options and environment that hand r's
// credential to the git CLI: the credential helpers configured anywhere
// else are reset and credentialHelper answers, for r's scheme, host and
// port only (a redirect to another host gets nothing). Without a
// credential both are empty: git's own helpers answer.
func (r Remote) gitAuth() (args, env []string) {
	user, pw, ok := r.httpCredential()
	if !ok {
		return nil, nil
	}
	u, err := url.Parse(r.target())
	if err != nil {
		return nil, nil
	}
	origin := u.Scheme + "://" + u.Host
	args = []string{"-c", "credential.helper=", "-c", "credential." + origin + ".helper=" + credentialHelper}
	return args, []string{credUserEnv + "=" + user, credPasswordEnv + "=" + pw}
}

// scrub replaces r's password (or a token given as the user name), as is
// and URL-escaped, and the values of its URL's query in s with ***: a
// message of git or of a server that echoed them. The URLs given to git
// and to the HTTP client hold no password, so their messages have none
// to echo: this is the second line. A query goes to git as it is written
// (a host may take a token there), so for it scrub is the first line.
func (r Remote) scrub(s string) string {
	for _, v := range r.queryValues() {
		s = strings.ReplaceAll(s, v, "***")
	}
	if !r.HasCredential() {
		return s
	}
	// The password, or the user name when there is none (a token given
	// as the user name).
	pw := string(r.cred.password)
	if pw == "" {
		pw = string(r.cred.user)
	}
	for _, v := range []string{pw, url.QueryEscape(pw), url.PathEscape(pw)} {
		s = strings.ReplaceAll(s, v, "***")
	}
	return s
}

// scrubErr is err with r's secrets replaced in its message (see scrub);
// errors.Is and errors.As see through it to err.
func (r Remote) scrubErr(err error) error {
	if err == nil {
		return nil
	}
	if msg := err.Error(); r.scrub(msg) != msg {
		return &scrubbedError{msg: r.scrub(msg), err: err}
	}
	return err
}

// scrubbedError is an error whose message had a credential taken out.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// errUnauthorized is a remote's 401: the request had no credential it
// takes.
var errUnauthorized = errors.New("401 Unauthorized")

// helperRemote is remote with the credential git's credential helpers
// gave for it last (see fillCredential), when it has none of its own;
// remote itself otherwise.
func (r *Repository) helperRemote(remote Remote) Remote {
	if remote.HasCredential() {
		return remote
	}
	if v, ok := r.sp.helperCreds.Load(remote.target()); ok {
		return v.(Remote)
	}
	return remote
}

// fillCredential asks git's credential helpers (git credential fill, as
// git push does) for a credential for remote, which has none of its
// own, so that the native send-pack authenticates as git push would; ok
// is false when none answers. Nothing prompts: no terminal, no askpass.
func (r *Repository) fillCredential(ctx context.Context, remote Remote) (Remote, bool) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "-c", "credential.interactive=never", "credential", "fill")
	cmd.Dir = r.st.refs.commonDir
	cmd.Env = gitEnv("GIT_DIR="+r.st.refs.commonDir, "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=")
	cmd.Stdin = strings.NewReader("url=" + remote.target() + "\n\n")
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	if err != nil {
		return remote, false
	}
	var c credential
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		switch k {
		case "username":
			c.user = secret(v)
		case "password":
			c.password = secret(v)
		}
	}
	if c.user == "" && c.password == "" {
		return remote, false
	}
	filled := remote
	filled.cred = &c
	return filled, true
}
