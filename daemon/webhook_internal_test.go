package daemon

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/quirehq/quire/gitsync"
)

func TestRepoKey(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://github.com/acme/bot.git", "github.com/acme/bot"},
		{"https://GitHub.com/Acme/Bot", "github.com/acme/bot"},
		{"https://user:token@github.com/acme/bot.git/", "github.com/acme/bot"},
		{"git@github.com:acme/bot.git", "github.com/acme/bot"},
		{"ssh://git@gitea.example:2222/acme/bot.git", "gitea.example/acme/bot"},
		{"https://gitea.example:3000/acme/bot", "gitea.example/acme/bot"},
		{"git://github.com/acme/bot.git", "github.com/acme/bot"},
		{"http://127.0.0.1:7480/bot.git", "127.0.0.1/bot"},
		{"file:///srv/git/bot.git", "/srv/git/bot"},
		{"/srv/git/bot.git", "/srv/git/bot"},
		{"/srv/git/../git/bot.git/", "/srv/git/bot"},
		{"", ""},
	} {
		if got := repoKey(tc.in); got != tc.want {
			t.Errorf("repoKey(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

var repoName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// FuzzRepoKey: the forms a hosting service gives one repository (HTTPS
// with or without .git and credentials, scp-like SSH, ssh:// with a port)
// have one key, and the key of another name differs.
func FuzzRepoKey(f *testing.F) {
	f.Add("acme", "bot")
	f.Add("Acme", "bot.v2")
	f.Add("a-b", "c_d")
	f.Fuzz(func(t *testing.T, owner, name string) {
		if !repoName.MatchString(owner) || !repoName.MatchString(name) || strings.HasSuffix(strings.ToLower(name), ".git") {
			t.Skip()
		}
		forms := []string{
			"https://github.com/" + owner + "/" + name + ".git",
			"https://github.com/" + owner + "/" + name,
			"https://x:y@GitHub.com/" + owner + "/" + name + "/",
			"git@github.com:" + owner + "/" + name + ".git",
			"ssh://git@github.com:22/" + owner + "/" + name + ".git",
		}
		want := repoKey(forms[0])
		for _, u := range forms[1:] {
			if got := repoKey(u); got != want {
				t.Errorf("repoKey(%q) = %q, repoKey(%q) = %q", u, got, forms[0], want)
			}
		}
		if other := repoKey("https://github.com/" + owner + "/" + name + "x.git"); other == want {
			t.Errorf("%s and %sx have one key %q", name, name, want)
		}
	})
}

// FuzzHookPayload: any body is answered without a panic: signed, with
// 202 (or 400 when it is not JSON); unsigned or signed with another
// secret, with 401.
func FuzzHookPayload(f *testing.F) {
	f.Add([]byte(`{"ref":"refs/heads/main","repository":{"full_name":"acme/bot","clone_url":"https://github.com/acme/bot.git"}}`))
	f.Add([]byte(`{"ref":"refs/heads/x","repository":{"ssh_url":"git@github.com:acme/bot"}}`))
	f.Add([]byte(`{"repository":null}`))
	f.Add([]byte(`[]`))
	secret := []byte("s3cret")
	wh := &webhook{secret: secret, log: slog.New(slog.DiscardHandler),
		sources: &sourceSet{list: []*source{{kind: kindUpstream, name: "https://github.com/acme/bot.git", up: &upstream{follower: gitsync.NewFollower(nil, gitsync.Remote{}, nil)}}}}}
	send := func(body []byte, key []byte) int {
		r := httptest.NewRequest(http.MethodPost, HookPath, bytes.NewReader(body))
		r.Header.Set("X-GitHub-Event", "push")
		mac := hmac.New(sha256.New, key)
		mac.Write(body)
		r.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
		status, _ := wh.answer(httptest.NewRecorder(), r)
		return status
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if status := send(body, secret); status != http.StatusAccepted && status != http.StatusBadRequest && status != http.StatusRequestEntityTooLarge {
			t.Errorf("signed: %d", status)
		}
		if status := send(body, []byte("guess")); status != http.StatusUnauthorized {
			t.Errorf("signed with another secret: %d", status)
		}
	})
}
