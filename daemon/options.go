package daemon

import (
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/daemon/mcp"
	"github.com/quirehq/quire/internal/xdg"
	"github.com/quirehq/quire/llm"
	"github.com/quirehq/quire/memory"
)

// Options configure a Daemon. At least one source (Dir or Dirs, ReposDir
// or Upstream) is required.
type Options struct {
	// SkillsDir is the managed skills directory (tier 4 of every agent's
	// skills); HomeDir, when set, adds HomeDir/.agents/skills (tier 3).
	// Both are watched: a change re-deploys every agent's skills.
	SkillsDir string
	HomeDir   string
	// Dir is a working tree served in dev mode: watched for changes,
	// writes go to its files (not committed). Dirs are more, each served
	// the same way (quire serve --dir, repeated); an agent two of them
	// define stops the start.
	Dir  string
	Dirs []string
	// ReposDir holds the bare repositories the daemon hosts and accepts
	// pushes for (<name>.git), served over smart HTTP on GitListen. One
	// daemon at a time: New takes a lock file there (holding its pid)
	// and refuses a directory another daemon holds. ReposDir and
	// Upstream need the git CLI (gitsync.MinGitVersion or later) on
	// PATH; New checks it.
	ReposDir string
	// GitListen is the address of the git endpoint, with ReposDir
	// (default 127.0.0.1:7480).
	GitListen string
	// GitTokens, when not empty, are the credentials the git endpoint
	// requires (HTTP basic auth, the token as the password). Empty leaves
	// the endpoint open: only tests do that; `quire serve` always passes
	// at least the token of its state directory (LoadGitToken).
	GitTokens []GitToken
	// AllowedHosts are host names (besides the listeners' own addresses
	// and localhost) that the git endpoint and the TCP API answer to.
	AllowedHosts []string
	// AllowCreate lets a push to a new name create a hosted repository
	// (off: only existing repositories accept pushes).
	AllowCreate bool
	// AllowNonFastForward lets a push move a hosted repository's main to
	// a commit that does not descend from it (live, with every agent
	// write, never loses history either way).
	AllowNonFastForward bool
	// Upstream is a remote to follow, fetched every Poll (default 30 s).
	// User information in its URL is taken out of it at once and used as
	// the credential (with a warning: see UpstreamCredential); the URL
	// is shown without it everywhere (gitsync.Remote).
	Upstream string
	Poll     time.Duration
	// UpstreamCredential is the upstream's credential, "USER:TOKEN" or a
	// token alone; it replaces one in the URL. Without either, git's own
	// credential helpers answer.
	UpstreamCredential string
	// FetchTimeout bounds one fetch of the upstream (default 1 min): an
	// upstream that stops answering is reported in the status while the
	// last good commit is served.
	FetchTimeout time.Duration
	// WriteTimeout bounds an API write from its arrival, waiting for
	// other writes and a fetch included (default 30 s):
	// it is answered by then and a second at most (outcome_unknown when
	// it may have been applied).
	WriteTimeout time.Duration
	// WebhookSecret, when set, turns on POST /v1/hooks/git: a push
	// webhook (GitHub, Gitea) signed with it makes the followed upstream
	// it names fetch at once.
	WebhookSecret []byte
	// Socket is the unix socket of the local API (default
	// $XDG_RUNTIME_DIR/quire/quire.sock).
	Socket string
	// APIListen, when set, serves the local API on TCP too; Tokens are
	// then required there.
	APIListen string
	Tokens    api.Tokens
	// People are the holders of Tokens (name and email for the commits
	// they make in the console).
	People api.People
	// UIListen, when set, serves the console (and the API behind it, with
	// Tokens) on a listener of its own, meant for loopback
	// (127.0.0.1:7878 in quire serve). An address in use is a warning,
	// not an error: the console is then on --api-listen alone.
	UIListen string
	// DatabaseURL selects the PostgreSQL store; "" means the embedded one.
	DatabaseURL string
	// DatabaseWait starts the daemon even when the database does not
	// answer: prompts are served, and the store connects in the
	// background. Without it, an unreachable database fails New.
	DatabaseWait bool
	// DatabaseSchema holds Quire's tables in that database; "" means
	// pgstore's default ("quire").
	DatabaseSchema string
	// Store, when set, is used instead of building one (tests).
	Store memory.Store
	// Embedder embeds memory chunks; nil means memory.None{} (full text
	// only: the offline embedders add no measurable recall).
	Embedder memory.Embedder
	// CacheDir holds the embedding cache and upstream mirrors; "" means
	// a directory under os.UserCacheDir.
	CacheDir string
	// Version is reported by GET /v1/status.
	Version string
	// Logger receives the daemon's logs; nil discards.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// PruneInterval is how often daily logs past their retention are
	// pruned (default 1 h; the first run is after a minute or PruneInterval,
	// whichever is shorter).
	PruneInterval time.Duration
	// IndexWait is how long the deploy report of a push waits for the
	// index before saying "indexing continues" (default 1 s).
	IndexWait time.Duration
	// IndexTimeout bounds one agent's index run (default 2 min): a store
	// that stops answering is reported, and the run retried.
	IndexTimeout time.Duration
	// HeaderTimeout and BodyTimeout cut slow clients off: a request's
	// headers must arrive within HeaderTimeout (default 10 s), an API
	// request whole within BodyTimeout (default 30 s; git pushes are
	// bounded by the git endpoint itself).
	HeaderTimeout, BodyTimeout time.Duration
	// LLM is the model summoning and memory consolidation ask (quire
	// serve --llm-url); nil answers those routes no_model and skips
	// agent.yaml's consolidate schedules.
	LLM *llm.Client
	// MCPSessions bounds the MCP sessions of streamable HTTP, on the
	// socket and the TCP listener together; zero fields are mcp's
	// defaults.
	MCPSessions mcp.SessionLimits
}

// DefaultOptions are the defaults of the fields of Options that have
// one and do not depend on the environment: what New uses for a zero
// field, and the defaults of `quire serve`'s flags.
func DefaultOptions() Options {
	return Options{
		GitListen:     "127.0.0.1:7480",
		Poll:          30 * time.Second,
		FetchTimeout:  time.Minute,
		WriteTimeout:  30 * time.Second,
		PruneInterval: time.Hour,
		IndexWait:     time.Second,
		IndexTimeout:  2 * time.Minute,
		HeaderTimeout: 10 * time.Second,
		BodyTimeout:   30 * time.Second,
	}
}

// withDefaults returns o with its zero fields set to their defaults:
// DefaultOptions, and the socket, the cache directory, the embedder,
// the logger and the clock.
func (o Options) withDefaults() Options {
	def := DefaultOptions()
	for _, f := range []struct {
		v   *time.Duration
		def time.Duration
	}{
		{&o.Poll, def.Poll}, {&o.FetchTimeout, def.FetchTimeout}, {&o.WriteTimeout, def.WriteTimeout},
		{&o.PruneInterval, def.PruneInterval}, {&o.IndexWait, def.IndexWait}, {&o.IndexTimeout, def.IndexTimeout},
		{&o.HeaderTimeout, def.HeaderTimeout}, {&o.BodyTimeout, def.BodyTimeout},
	} {
		if *f.v <= 0 {
			*f.v = f.def
		}
	}
	if o.GitListen == "" {
		o.GitListen = def.GitListen
	}
	if o.Socket == "" {
		o.Socket = api.DefaultSocket(os.Getenv)
	}
	if o.CacheDir == "" {
		o.CacheDir = xdg.CacheDir(os.Getenv)
		if o.CacheDir == "" {
			o.CacheDir = filepath.Join(xdg.PrivateTempDir(), "cache")
		}
	}
	if o.Embedder == nil {
		o.Embedder = memory.None{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}
