package gitsync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

const remoteToken = "tok-3f9a1c7e5b2d4086"

// printed is every way a Remote reaches text: fmt with each verb, in a
// struct (exported and unexported fields), JSON, slog's handlers, an
// error wrapping it.
func printed(r Remote) string {
	var b strings.Builder
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d", "%T"} {
		fmt.Fprintf(&b, verb+"\n", r)
	}
	type exported struct{ R Remote }
	type unexported struct{ r Remote }
	type pointer struct{ r *Remote }
	for _, v := range []any{exported{r}, unexported{r}, &unexported{r}, pointer{&r}, []Remote{r}, map[string]Remote{"k": r}} {
		fmt.Fprintf(&b, "%v %+v %#v\n", v, v, v)
	}
	j, err := json.Marshal(exported{r})
	fmt.Fprintf(&b, "%s %v\n", j, err)
	for _, h := range []slog.Handler{slog.NewJSONHandler(&b, nil), slog.NewTextHandler(&b, nil)} {
		slog.New(h).Info("msg", "remote", r, "any", any(r), "ptr", &r, "group", exported{r})
	}
	fmt.Fprintf(&b, "%v\n", fmt.Errorf("fetch %s: %w", r, errors.New("x")))
	return b.String()
}

func TestRemoteNeverPrintsItsCredential(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, raw, cred string
		shown           string // String()
		inURL, hasCred  bool
	}{
		{"user and token in the URL", "http://follower:" + remoteToken + "@10.0.0.1:7480/agents.git", "", "http://10.0.0.1:7480/agents.git", true, true},
		{"a token as the user name", "https://" + remoteToken + "@github.com/acme/agents.git", "", "https://github.com/acme/agents.git", true, true},
		{"an escaped token", "https://u:" + strings.ReplaceAll(remoteToken, "-", "%2D") + "@host/a.git", "", "https://host/a.git", true, true},
		{"a credential apart", "https://host/a.git", "follower:" + remoteToken, "https://host/a.git", false, true},
		{"a token apart", "https://host/a.git", remoteToken, "https://host/a.git", false, true},
		{"both: the one apart wins", "https://u:old-token-9999@host/a.git", remoteToken, "https://host/a.git", true, true},
		{"none", "https://host/a.git", "", "https://host/a.git", false, false},
		{"ssh with a password", "ssh://git:" + remoteToken + "@host/a.git", "", "ssh://git@host/a.git", true, false},
		{"scp-like", "git@host:acme/a.git", "", "git@host:acme/a.git", false, false},
		{"a token in the query", "https://host/a.git?token=" + remoteToken, "", "https://host/a.git?token=***", false, false},
		{"an escaped token in the query", "https://host/a.git?x=1&access_token=" + strings.ReplaceAll(remoteToken, "-", "%2D") + "#frag", "", "https://host/a.git?x=***&access_token=***#frag", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRemote(tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			if tc.cred != "" {
				if r, err = r.WithCredential(tc.cred); err != nil {
					t.Fatal(err)
				}
			}
			if r.String() != tc.shown || r.CredentialInURL() != tc.inURL || r.HasCredential() != tc.hasCred {
				t.Errorf("String %q, CredentialInURL %v, HasCredential %v; want %q, %v, %v",
					r.String(), r.CredentialInURL(), r.HasCredential(), tc.shown, tc.inURL, tc.hasCred)
			}
			out := printed(r)
			for _, s := range []string{remoteToken, strings.ReplaceAll(remoteToken, "-", "%2D"), "old-token-9999"} {
				if strings.Contains(out, s) {
					t.Fatalf("a printing shows the credential:\n%s", out)
				}
			}
			if !strings.Contains(out, tc.shown) {
				t.Fatalf("the printings do not show the URL %s:\n%s", tc.shown, out)
			}
		})
	}
}

func TestParseRemoteErrorsQuoteNothing(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"http://follower:" + remoteToken + "@host:port/a.git", // a bad port
		"http://follower:" + remoteToken + "%zz@host/a.git",   // a bad escape
		"http://follower:" + remoteToken + "@host/a\n.git",    // a line break
		"",
	} {
		_, err := ParseRemote(raw)
		if err == nil {
			t.Fatalf("ParseRemote(%q) accepted it", raw)
		}
		if strings.Contains(err.Error(), remoteToken) {
			t.Fatalf("the error quotes the credential: %v", err)
		}
	}
	r, _ := ParseRemote("https://host/a.git")
	for _, cred := range []string{"", " \n", "user:", ":" + remoteToken, "a\n" + remoteToken} {
		if _, err := r.WithCredential(cred); err == nil || strings.Contains(err.Error(), remoteToken) {
			t.Errorf("WithCredential(%q): %v, want an error that does not quote it", cred, err)
		}
	}
}

func TestRemoteUserName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ raw, cred, user, password string }{
		{"http://follower:" + remoteToken + "@host/a.git", "", "follower", remoteToken},
		{"http://follower@host/a.git", remoteToken, "follower", remoteToken},
		{"http://host/a.git", remoteToken, DefaultCredentialUser, remoteToken},
		{"http://host/a.git", "bot:" + remoteToken, "bot", remoteToken},
		{"http://" + remoteToken + "@host/a.git", "", remoteToken, ""},
	} {
		r, err := ParseRemote(tc.raw)
		if err == nil && tc.cred != "" {
			r, err = r.WithCredential(tc.cred)
		}
		if err != nil {
			t.Fatal(err)
		}
		user, pw, ok := r.httpCredential()
		if !ok || user != tc.user || pw != tc.password {
			t.Errorf("%s with %q: sends %q/%q, want %q/%q", r, tc.cred, user, pw, tc.user, tc.password)
		}
	}
}

func TestScrubErr(t *testing.T) {
	t.Parallel()
	r, _ := ParseRemote("http://follower:" + remoteToken + "@host/a.git")
	inner := fmt.Errorf("fatal: unable to access 'http://follower:%s@host/a.git/': %w", remoteToken, ErrPushOutcomeUnknown)
	err := r.scrubErr(inner)
	if strings.Contains(err.Error(), remoteToken) || !strings.Contains(err.Error(), "follower:***@host") {
		t.Fatalf("scrubbed: %v", err)
	}
	if !errors.Is(err, ErrPushOutcomeUnknown) {
		t.Fatal("errors.Is does not see through the scrubbed error")
	}
	plain := errors.New("nothing secret")
	if r.scrubErr(plain) != plain {
		t.Fatal("an error with nothing to scrub was wrapped")
	}
}

// A token in a URL's query goes to git as it is and is scrubbed from
// what git or a server says, as written and unescaped.
func TestScrubQueryToken(t *testing.T) {
	t.Parallel()
	raw := "https://host/a.git?token=" + strings.ReplaceAll(remoteToken, "-", "%2D")
	r, err := ParseRemote(raw)
	if err != nil {
		t.Fatal(err)
	}
	if r.target() != raw {
		t.Errorf("git is given %q, want %q", r.target(), raw)
	}
	if _, _, _, ok := httpRemote(r, "test"); ok {
		t.Error("a URL with a query went to the native send-pack, whose errors print its base URL")
	}
	for _, msg := range []string{
		"fatal: unable to access '" + raw + "/': 403",
		"remote: token " + remoteToken + " is expired",
	} {
		got := r.scrubErr(errors.New(msg)).Error()
		if strings.Contains(got, remoteToken) || strings.Contains(got, strings.ReplaceAll(remoteToken, "-", "%2D")) {
			t.Errorf("scrubbed %q to %q", msg, got)
		}
	}
}

// authHost is a quire host with two branches that takes one credential.
type authHost struct {
	url string // no credential
	up  *Repository
}

func newAuthHost(t *testing.T, user, token string) *authHost {
	t.Helper()
	h, err := NewHost(t.TempDir(), HostOptions{Live: true, AllowCreate: true, Authenticate: Tokens(map[string]string{user: token})})
	if err != nil {
		t.Fatal(err)
	}
	ah := &authHost{}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	ah.url = srv.URL + "/ws.git"
	withCred := strings.Replace(ah.url, "://", "://"+user+":"+token+"@", 1)
	git(t, newWorkRepo(t, map[string]string{"AGENTS.md": "v0\n", "MEMORY.md": "# Memory\n"}), "push", "-q", withCred, "main")
	if ah.up, err = h.Repository("ws"); err != nil {
		t.Fatal(err)
	}
	return ah
}

// follow fetches the host into a new mirror with remote and returns the
// mirror and its upstream live.
func follow(t *testing.T, remote Remote) (*Repository, plumbing.Hash, error) {
	t.Helper()
	mirror, err := Open(newBare(t))
	if err != nil {
		t.Fatal(err)
	}
	f := NewFollower(mirror, remote, nil)
	if _, err := f.Fetch(context.Background()); err != nil {
		return mirror, plumbing.ZeroHash, err
	}
	live, err := mirror.Resolve("refs/remotes/upstream/live")
	if err != nil {
		t.Fatal(err)
	}
	return mirror, live, nil
}

// TestRemoteCredentialAuthenticates: a follower whose credential is given
// apart from the URL fetches and pushes (natively and with git push) to a
// host that requires it; the git credential helpers configured for the
// user are not asked, and learn nothing. A wrong credential fails
// without any error showing it.
func TestRemoteCredentialAuthenticates(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	asked := filepath.Join(home, "asked")
	// A helper of the user's that would hand out a wrong password, and
	// notes every operation it is asked for.
	helper := fmt.Sprintf("!f() { echo \"$1\" >> %s; cat >/dev/null; echo password=wrong; }; f", asked)
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[credential]\n\thelper = \""+strings.ReplaceAll(helper, `"`, `\"`)+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ah := newAuthHost(t, "follower", remoteToken)
	// From here every git command line is noted: none may hold the token
	// (every local user can read a command line).
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin, argv := filepath.Join(home, "bin"), filepath.Join(home, "argv")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	wrapper := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' \"$*\" >> %s\nexec %s \"$@\"\n", argv, realGit)
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	ctx := context.Background()
	r, err := ParseRemote(ah.url)
	if err != nil {
		t.Fatal(err)
	}
	if r, err = r.WithCredential("follower:" + remoteToken); err != nil {
		t.Fatal(err)
	}
	mirror, live, err := follow(t, r)
	if err != nil {
		t.Fatalf("fetch with the credential: %v", err)
	}
	for i, gitOnly := range []bool{false, true} {
		mirror.sp.gitOnly.Store(gitOnly)
		h, err := mirror.CommitOn(ctx, live, CommitRequest{Author: agentSig, Message: "a write",
			Writes: []FileWrite{{Path: "MEMORY.md", Content: fmt.Appendf(nil, "# Memory\n\nwrite %d\n", i)}}})
		if err != nil {
			t.Fatal(err)
		}
		now, err := mirror.PushCAS(ctx, r, LiveRef, live, h)
		if err != nil || now != h {
			t.Fatalf("push (git only: %v): %s, %v", gitOnly, now, err)
		}
		live = h
	}
	if n, c := mirror.sp.native.Load(), mirror.sp.cli.Load(); n != 1 || c != 1 {
		t.Errorf("%d native pushes and %d with git, want 1 and 1 (last fallback: %v)", n, c, mirror.sp.lastFallback)
	}
	if b, err := os.ReadFile(asked); err == nil {
		t.Errorf("the user's credential helper was asked: %s", b)
	}
	if b, err := os.ReadFile(argv); err != nil || !strings.Contains(string(b), "fetch") || !strings.Contains(string(b), "push") {
		t.Errorf("git's command lines were not noted (%v): %s", err, b)
	} else if strings.Contains(string(b), remoteToken) {
		t.Errorf("a git command line holds the token:\n%s", b)
	}

	// A wrong token: refused, and no error shows it.
	wrong, _ := r.WithCredential("follower:" + strings.ToUpper(remoteToken))
	_, _, err = follow(t, wrong)
	if err == nil {
		t.Fatal("a fetch with a wrong token worked")
	}
	h, _ := mirror.CommitOn(ctx, live, CommitRequest{Author: agentSig, Message: "a write", Writes: []FileWrite{{Path: "MEMORY.md", Content: []byte("x\n")}}})
	for _, gitOnly := range []bool{false, true} {
		mirror.sp.gitOnly.Store(gitOnly)
		mirror.liveHosts.Clear()
		_, perr := mirror.PushCAS(ctx, wrong, LiveRef, live, h)
		if perr == nil {
			t.Fatal("a push with a wrong token worked")
		}
		err = errors.Join(err, perr)
	}
	if s := err.Error(); strings.Contains(s, strings.ToUpper(remoteToken)) || strings.Contains(s, remoteToken) {
		t.Fatalf("an error shows the token: %v", err)
	}
}

// TestRemoteWithGitsHelpers: without a credential of its own, the
// follower's git gets one from the git credential helpers the user
// configured, as any git command does, and so does the native send-pack
// (git credential fill).
func TestRemoteWithGitsHelpers(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	helper := "!f() { cat >/dev/null; echo username=follower; echo password=" + remoteToken + "; }; f"
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[credential]\n\thelper = \""+helper+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ah := newAuthHost(t, "follower", remoteToken)
	r, err := ParseRemote(ah.url)
	if err != nil {
		t.Fatal(err)
	}
	mirror, live, err := follow(t, r)
	if err != nil {
		t.Fatalf("fetch with git's credential helper: %v", err)
	}
	ctx := context.Background()
	h, err := mirror.CommitOn(ctx, live, CommitRequest{Author: agentSig, Message: "a write", Writes: []FileWrite{{Path: "MEMORY.md", Content: []byte("x\n")}}})
	if err != nil {
		t.Fatal(err)
	}
	if now, err := mirror.PushCAS(ctx, r, LiveRef, live, h); err != nil || now != h {
		t.Fatalf("push with git's credential helper: %s, %v", now, err)
	}
	if got, _ := ah.up.Resolve("live"); got != h {
		t.Fatalf("the host's live is %s, want %s", got, h)
	}
	if n, c := mirror.sp.native.Load(), mirror.sp.cli.Load(); n != 1 || c != 0 {
		t.Errorf("%d native pushes and %d with git, want 1 and 0 (last fallback: %v)", n, c, mirror.sp.lastFallback)
	}
	if strings.Contains(printed(mirror.helperRemote(r)), remoteToken) {
		t.Error("the Remote with the helper's credential prints it")
	}
}
