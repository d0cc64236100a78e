package gitsync

import (
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// HostOptions configure a Host. The zero value is usable.
type HostOptions struct {
	// Validator checks every pushed ref before anything is written;
	// nil means RepositoryChecks(). Compose with Validators to add
	// checks.
	Validator Validator
	// AfterPush, when set, runs after a push moved at least one ref,
	// before the response ends, with a SourcePush event; what it writes
	// to remote reaches the client as "remote:" lines (when the client
	// speaks side-band).
	AfterPush func(ctx context.Context, e Event, remote io.Writer)
	// Authenticate, when set, requires HTTP basic auth on every request
	// and reports whether the user name and token are valid.
	Authenticate func(user, token string) bool
	// MaxRequestBytes bounds a request body (as sent, and once
	// inflated when gzip-encoded) and so the pack of one push, refused
	// while it arrives. Default 256 MiB.
	MaxRequestBytes int64
	// RequestTimeout bounds one request. Default 5 minutes.
	RequestTimeout time.Duration
	// ValidateTimeout bounds the validation of one push, all its refs
	// together (refs that name one commit are validated once); refs not
	// validated by then are refused, saying so. Default 1 minute.
	ValidateTimeout time.Duration
	// AllowCreate lets a push to a name that does not exist create the
	// repository. Off by default: repositories are created with Create.
	AllowCreate bool
	// MaxConcurrentPushes bounds the pushes processed at once; another
	// waits up to 10 s, then gets HTTP 503. Default 4.
	MaxConcurrentPushes int
	// Live turns on the two-branch rule of workspace repositories: main
	// (MainRef) is written by people, live (LiveRef) by the daemon. A
	// push to main is validated on its merge with live (three-way per
	// file, as Merge says) and, once accepted, the
	// merge lands on live under the writer lock (first parent the old
	// live, second the new main); a conflict refuses the push and nothing
	// moves. A push to live is fast-forward only. Deleting main or live
	// is refused.
	Live bool
	// Merge is the merge policy of the repositories (see MergePolicy):
	// how the merge of main into live, a daemon's write onto a live that
	// moved and Repository.MergeOn treat a file both sides changed. nil
	// merges every file line by line.
	Merge MergePolicy
	// AllowNonFastForward lets a push move main to a commit that does
	// not descend from it (live keeps every agent write either way).
	AllowNonFastForward bool
	// Logger receives one line per push; nil discards.
	Logger *slog.Logger
}

// Host keeps bare repositories under one directory (<dir>/<name>.git)
// and serves them over git's smart HTTP protocol at /<name>.git. It is
// an http.Handler. Every Repository it hands out is the one instance for
// that name, so the daemon's commits and pushes share one writer lock.
type Host struct {
	dir  string
	opts HostOptions

	mu    sync.Mutex
	repos map[string]*Repository

	pushes   chan struct{} // push slots
	pushWait time.Duration

	pushMu   sync.Mutex
	lastPush map[string]PushRecord
	maintain chan struct{} // wakes Maintain: many packs were written
}

// NewHost serves the repositories under dir, creating dir if needed.
func NewHost(dir string, opts HostOptions) (*Host, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create repository directory: %w", err)
	}
	if opts.Validator == nil {
		opts.Validator = RepositoryChecks()
	}
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = 256 << 20
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = 5 * time.Minute
	}
	if opts.ValidateTimeout <= 0 {
		opts.ValidateTimeout = time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxConcurrentPushes <= 0 {
		opts.MaxConcurrentPushes = 4
	}
	return &Host{dir: dir, opts: opts, repos: map[string]*Repository{},
		pushes: make(chan struct{}, opts.MaxConcurrentPushes), pushWait: pushWait, lastPush: map[string]PushRecord{},
		maintain: make(chan struct{}, 1)}, nil
}

var repoNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// ValidRepoName reports whether name may name a hosted repository:
// letters, digits, '.', '_' and '-', starting with a letter or digit.
func ValidRepoName(name string) bool {
	return repoNameRE.MatchString(name) && !strings.HasSuffix(name, ".lock") && !strings.HasSuffix(name, ".git")
}

// ErrNoRepository is returned for a hosted repository that does not
// exist.
var ErrNoRepository = errors.New("no such repository")

// Repository opens the hosted repository name.
func (h *Host) Repository(name string) (*Repository, error) {
	return h.repository(name, false)
}

// Create opens the hosted repository name, creating an empty bare
// repository (HEAD → refs/heads/main) when there is none.
func (h *Host) Create(name string) (*Repository, error) {
	return h.repository(name, true)
}

func (h *Host) repository(name string, create bool) (*Repository, error) {
	if !ValidRepoName(name) {
		return nil, fmt.Errorf("repository name %q: %w", name, ErrNoRepository)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if r, ok := h.repos[name]; ok {
		return r, nil
	}
	p := filepath.Join(h.dir, name+".git")
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		if !create {
			return nil, fmt.Errorf("repository %q: %w", name, ErrNoRepository)
		}
		if err := initBare(p); err != nil {
			return nil, fmt.Errorf("create repository %q: %w", name, err)
		}
	}
	r, err := Open(p)
	if err != nil {
		return nil, err
	}
	r.st.onPack = func() { h.packWritten(r) }
	r.merge = h.opts.Merge
	h.repos[name] = r
	return r, nil
}

// initBare creates an empty bare repository at p (HEAD → refs/heads/main)
// readable by its owner only: directories 0700, files 0600. It is built
// in a temporary directory and renamed into place, so a crash leaves no
// half-made repository.
func initBare(p string) error {
	tmp, err := os.MkdirTemp(filepath.Dir(p), ".init-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	g, err := gogit.PlainInit(tmp, true)
	if err != nil {
		return err
	}
	if err := g.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName("main"))); err != nil {
		return err
	}
	err = filepath.WalkDir(tmp, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.Chmod(q, 0o700)
		}
		if err := os.Chmod(q, 0o600); err != nil {
			return err
		}
		return syncFile(q)
	})
	if err != nil {
		return err
	}
	for _, d := range []string{"objects/pack", "objects/info", "refs/heads", "refs/tags", "refs", "objects", "."} {
		if err := os.MkdirAll(filepath.Join(tmp, d), 0o700); err != nil {
			return err
		}
		if err := syncDir(filepath.Join(tmp, d)); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, p); err != nil {
		return err
	}
	return syncDir(filepath.Dir(p))
}

// ServeHTTP answers GET /<name>.git/info/refs?service=…, POST
// /<name>.git/git-upload-pack and POST /<name>.git/git-receive-pack.
func (h *Host) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	user := ""
	if h.opts.Authenticate != nil {
		u, tok, ok := req.BasicAuth()
		if !ok || !h.opts.Authenticate(u, tok) {
			w.Header().Set("WWW-Authenticate", `Basic realm="quire"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		user = u
	}
	name, action, ok := splitGitPath(req.URL.Path)
	if !ok {
		http.NotFound(w, req)
		return
	}
	ctx, cancel := context.WithTimeout(req.Context(), h.opts.RequestTimeout)
	defer cancel()
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(h.opts.RequestTimeout))
	// Leave time after the context's deadline to report a refusal.
	_ = rc.SetWriteDeadline(time.Now().Add(h.opts.RequestTimeout + 30*time.Second))
	w.Header().Set("Cache-Control", "no-cache")
	switch {
	case action == "info/refs" && req.Method == http.MethodGet:
		h.serveRefs(w, req, name)
	case action == "git-upload-pack" && req.Method == http.MethodPost:
		h.serveUploadPack(ctx, w, req, name)
	case action == "git-receive-pack" && req.Method == http.MethodPost:
		h.serveReceivePack(ctx, w, req, name, user)
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// notFound answers a request for a repository that is not hosted here.
// git shows the body of this answer (a 404 to info/refs, text/plain) as
// "remote:" lines, so it says how to get one.
func (h *Host) notFound(w http.ResponseWriter, name string, push bool) {
	msg := fmt.Sprintf("repository %q does not exist on this daemon", name+".git")
	if push && !h.opts.AllowCreate {
		msg += "; a push creates it only when the daemon runs with quire serve --allow-create"
	}
	http.Error(w, msg, http.StatusNotFound)
}

// splitGitPath splits "/<name>.git/<action>".
func splitGitPath(p string) (name, action string, ok bool) {
	p = strings.TrimPrefix(p, "/")
	i := strings.Index(p, ".git/")
	if i <= 0 {
		return "", "", false
	}
	name, action = p[:i], p[i+len(".git/"):]
	if !ValidRepoName(name) {
		return "", "", false
	}
	return name, action, true
}

// body returns the request body, bounded and inflated if gzip-encoded.
func (h *Host) body(w http.ResponseWriter, req *http.Request) (io.Reader, error) {
	var r io.Reader = http.MaxBytesReader(w, req.Body, h.opts.MaxRequestBytes)
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("gzip body: %w", err)
		}
		r = &limitReader{r: zr, n: h.opts.MaxRequestBytes}
	}
	return r, nil
}

// errTooLarge is a request body over MaxRequestBytes.
var errTooLarge = errors.New("request too large")

// limitReader fails with errTooLarge past n bytes (io.LimitReader would
// end the body quietly and the pack would look cut).
type limitReader struct {
	r io.Reader
	n int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n < 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > l.n+1 {
		p = p[:l.n+1] // one byte more tells "over the limit" from "at it"
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	if l.n < 0 {
		return n - 1, errTooLarge
	}
	return n, err
}

// capabilities advertised by each service.
const (
	receiveCaps = "report-status delete-refs side-band-64k quiet atomic ofs-delta agent=quire"
	// liveCap is advertised by a host with two branches (HostOptions.Live):
	// it decides a daemon's write pushed on an older live under its writer
	// lock (rebaseLive), so a pushing daemon may send it without a lease
	// (see Repository.PushCAS). git clients ignore capabilities they do not
	// know.
	liveCap = "quire-live"
)

func (h *Host) serveRefs(w http.ResponseWriter, req *http.Request, name string) {
	service := req.URL.Query().Get("service")
	if service != "git-upload-pack" && service != "git-receive-pack" {
		http.Error(w, "dumb http is not supported; use a git client that speaks smart http", http.StatusForbidden)
		return
	}
	r, err := h.Repository(name)
	switch {
	case errors.Is(err, ErrNoRepository) && service == "git-receive-pack" && h.opts.AllowCreate:
		// A push creates it.
	case errors.Is(err, ErrNoRepository):
		h.notFound(w, name, service == "git-receive-pack")
		return
	case err != nil:
		h.opts.Logger.Error("open repository", "repo", name, "err", err)
		http.Error(w, "cannot open repository", http.StatusInternalServerError)
		return
	}
	if service == "git-upload-pack" {
		h.serveUploadRefs(w, req, r)
		return
	}
	// A push to a new name (r nil) sees an empty repository; the push
	// creates it.
	caps := receiveCaps
	if h.opts.Live {
		caps += " " + liveCap
	}
	adv, err := advertisement(r, caps, h.opts.Logger)
	if err != nil {
		h.opts.Logger.Error("advertise refs", "repo", name, "err", err)
		http.Error(w, "cannot list refs", http.StatusInternalServerError)
		return
	}
	if h.opts.Live && r != nil {
		adv = withHaves(adv, r.recentLive(recentLiveHaves))
	}
	w.Header().Set("Content-Type", "application/x-"+service+"-advertisement")
	var out []byte
	out = appendPkt(out, "# service="+service+"\n")
	out = append(out, "0000"...)
	out = append(out, adv...)
	_, _ = w.Write(out)
}

// appendPkt appends one pkt-line.
func appendPkt(b []byte, s string) []byte {
	return append(fmt.Appendf(b, "%04x", len(s)+4), s...)
}

// Tokens returns an Authenticate function accepting the given user →
// token pairs. Tokens are compared by their SHA-256 digests in constant
// time, so the time taken says nothing of a valid token's length (a
// plain constant-time compare returns early on a length mismatch).
func Tokens(tokens map[string]string) func(user, token string) bool {
	return func(user, token string) bool {
		want, ok := tokens[user]
		have, need := sha256.Sum256([]byte(token)), sha256.Sum256([]byte(want))
		return ok && want != "" && subtle.ConstantTimeCompare(have[:], need[:]) == 1
	}
}
