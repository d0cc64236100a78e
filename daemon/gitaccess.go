package daemon

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/quirehq/quire/internal/xdg"
)

// GitToken is a credential of the git endpoint (HTTP basic auth: any user
// name the token's owner likes, the token as the password).
type GitToken struct {
	// User, when set, is the only user name the token is accepted with.
	User string
	// Token is the secret.
	Token string
	// Repos are the repositories (names without .git) the token may clone,
	// fetch and push; empty or "*" means every one.
	Repos []string
}

// gitAccess checks git endpoint credentials: tokens are compared by their
// SHA-256 digests in constant time, against every configured token.
type gitAccess struct {
	tokens []gitTokenDigest
}

type gitTokenDigest struct {
	user  string
	sum   [sha256.Size]byte
	repos []string
}

func newGitAccess(tokens []GitToken) *gitAccess {
	a := &gitAccess{}
	for _, t := range tokens {
		if t.Token == "" {
			continue
		}
		a.tokens = append(a.tokens, gitTokenDigest{user: t.User, sum: sha256.Sum256([]byte(t.Token)), repos: t.Repos})
	}
	return a
}

// check reports whether user/token is a credential and, if so, whether it
// may use repo.
func (a *gitAccess) check(user, token, repo string) (known, allowed bool) {
	want := sha256.Sum256([]byte(token))
	for _, t := range a.tokens {
		if subtle.ConstantTimeCompare(t.sum[:], want[:]) != 1 || (t.user != "" && t.user != user) {
			continue
		}
		known = true
		if len(t.repos) == 0 || slices.Contains(t.repos, "*") || slices.Contains(t.repos, repo) {
			allowed = true
		}
	}
	return known, allowed
}

// handler requires a credential on every request of the git endpoint.
func (a *gitAccess) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		repo, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), ".git/")
		user, token, ok := r.BasicAuth()
		known, allowed := false, false
		if ok {
			known, allowed = a.check(user, token, repo)
		}
		switch {
		case !known:
			w.Header().Set("WWW-Authenticate", `Basic realm="quire"`)
			http.Error(w, "authentication required: use a token of the daemon (git config --global credential.helper '!quire git-credential' on the daemon's machine, or one from --git-token-file)", http.StatusUnauthorized)
		case !allowed:
			http.Error(w, fmt.Sprintf("this token may not use the repository %q", repo), http.StatusForbidden)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// GitTokenFile is the name of the token the daemon creates in its state
// directory for its own user (see LoadGitToken).
const GitTokenFile = "git-token"

// LoadGitToken returns the git endpoint token kept in stateDir, creating
// it (32 random bytes, hex, in a 0600 file in a 0700 directory) when create
// is set and there is none yet. `quire git-credential` reads the same
// file, so the daemon's own user can push without configuring anything.
func LoadGitToken(stateDir string, create bool) (string, error) {
	path := filepath.Join(stateDir, GitTokenFile)
	b, err := os.ReadFile(path)
	if err == nil {
		tok := strings.TrimSpace(string(b))
		if len(tok) < 32 {
			return "", fmt.Errorf("git token %s is too short (%d characters): delete it and restart the daemon to make a new one", path, len(tok))
		}
		return tok, nil
	}
	if !errors.Is(err, os.ErrNotExist) || !create {
		return "", fmt.Errorf("git token: %w", err)
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return "", fmt.Errorf("create state directory: %w", err)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(raw[:])
	tmp, err := os.CreateTemp(stateDir, ".git-token-*")
	if err != nil {
		return "", fmt.Errorf("create git token: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return "", err
	}
	if _, err := tmp.WriteString(tok + "\n"); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	// A daemon started at the same moment may have made one first: keep
	// theirs (link fails when the name exists).
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return LoadGitToken(stateDir, false)
		}
		return "", fmt.Errorf("create git token: %w", err)
	}
	return tok, nil
}

// DefaultStateDir is where the daemon keeps its state (the git token):
// $XDG_STATE_HOME/quire, or ~/.local/state/quire.
func DefaultStateDir(getenv func(string) string) string {
	if d := xdg.StateDir(getenv); d != "" {
		return d
	}
	return filepath.Join(xdg.PrivateTempDir(), "state")
}
