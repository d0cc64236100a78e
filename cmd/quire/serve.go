package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
)

type serveOptions struct {
	llm                          llmOptions // summoning and consolidation (llmflags.go)
	dirs                         []string
	repos, gitListen, upstream   string
	socket, apiListen, tokenFile string
	uiListen                     string
	gitTokenFile, stateDir       string
	webhookSecretFile            string
	upstreamCredentialFile       string
	allowedHosts                 []string
	allowCreate                  bool
	allowNonFastForward          bool
	database, cacheDir, logLevel string
	logFormat                    string
	skillsDir                    string
	embedderOptions
	poll         time.Duration
	fetchTimeout time.Duration
	mcpSessions  mcpSessionFlags
	writeTimeout time.Duration
}

func serveCommand() *command {
	return &command{
		name:    "serve",
		summary: "run the daemon: deploy on git push, serve prompts and memory to chat clients",
		help: `
Sources of truth (one or more):
  --dir PATH        a working tree, watched for changes (dev mode; API writes
                    go to its files and are not committed); repeat it to
                    serve several
  --repos DIR       bare repositories the daemon hosts: push to
                    http://<git-listen>/<name>.git to deploy (a new name
                    only with --allow-create). main is people's, live the
                    daemon's: agents write on live, main is merged into it
  --upstream URL    a remote to follow, fetched every --poll; agent writes
                    are pushed to its live with compare-and-swap. Its
                    credential (USER:TOKEN or a token) comes from
                    --upstream-credential-file, else $QUIRE_UPSTREAM_TOKEN,
                    else git's credential helpers; not from the URL: the
                    command line is visible to every local user

Every agent's skills come from its workspace (skills/, .agents/skills/),
then ~/.agents/skills of the user running the daemon, the managed directory
(--skills-dir) and the skills built into quire. The shared directories are
watched: a change reaches the next prompt after half a second.

The git endpoint requires a token. On first start the daemon creates one in
its state directory (--state-dir, mode 0600), and 'quire git-credential' is a
git credential helper that hands it to git for this machine's addresses, so
that for the daemon's own user

  git config --global credential.helper '!quire git-credential'

is the whole set-up. --git-token-file adds tokens for others: one line per
token, "USER TOKEN [REPO...]" (USER * accepts any user name; no REPO means
every repository). The git endpoint and the TCP API refuse requests from
other web sites (Origin or Referer) and Host names other than their address,
localhost and the names given with --allowed-host.

The web console is served at /ui/ on --api-listen and on --ui-listen
(default 127.0.0.1:7878): 'quire ui' prints a one-time login link, and a
token of --token-file signs in too (name="..." email=... on its line author
the holder's commits there).

Chat clients use the local API on the unix socket (--socket; curl
--unix-socket works), and optionally on TCP (--api-listen) with bearer tokens
from --token-file: one token per line followed by the agents it may use, or *.

Several daemons may follow one upstream: each accepts writes. With a
PostgreSQL store they announce every new live commit to each other (LISTEN/
NOTIFY), so a write on one is served by the others within a second. Without
one, point a push webhook of the upstream (GitHub or Gitea, content type
application/json) at POST /v1/hooks/git on --api-listen with the secret of
--webhook-secret-file; --poll stays the fallback.

The memory store is embedded unless --database names a PostgreSQL database
(with pgvector). Embedders: none (full-text only, the default: the offline
vectors did not add recall), builtin (offline, lexical: parts of words),
glove (offline word vectors from a GloVe or word2vec text file:
--embed-file), openai (any OpenAI-compatible /v1/embeddings endpoint:
--embed-url, --embed-model, key in --embed-key-file, $QUIRE_EMBED_KEY or
$OPENAI_API_KEY).

With --llm-url and --llm-model (an OpenAI-compatible chat endpoint: OpenAI,
Ollama, llama.cpp, vLLM; key in --llm-key-file, $QUIRE_LLM_KEY or
$OPENAI_API_KEY) the daemon summons agents (POST /v1/agents/{agent}/summon,
quire summon) and consolidates memory (POST /v1/agents/{agent}/consolidate,
quire consolidate, and agent.yaml's consolidate: {every, days} schedule).
Both only propose: a branch proposals/<agent>/<n> a person merges.

The daemon keeps Go's garbage-collector default (GOGC=100: the heap stays
within about twice the live data) and, in a container with a memory limit,
sets a soft limit of 90% of it (GOMEMLIMIT); set either variable to choose
otherwise. Once a start's indexing is done, its garbage is returned to the
system.

Examples:
  quire serve --repos ./repos --allow-create
  # in a workspace's repository (e.g. a copy of examples/agents, committed):
  git push http://127.0.0.1:7480/agents.git main
  curl --unix-socket $XDG_RUNTIME_DIR/quire/quire.sock -d '{"user":"ines"}' \
    http://quire/v1/agents/concierge/prompt
  quire serve --dir examples --socket /tmp/quire.sock`,
		flags: func(fs *flag.FlagSet) any {
			o := &serveOptions{}
			def := daemon.DefaultOptions()
			fs.Func("dir", "serve the working tree in `directory` (dev mode; repeatable)", func(v string) error {
				o.dirs = append(o.dirs, v)
				return nil
			})
			fs.StringVar(&o.repos, "repos", "", "host the bare repositories in `directory` and accept pushes")
			fs.StringVar(&o.gitListen, "git-listen", def.GitListen, "`address` of the git endpoint (with --repos)")
			fs.StringVar(&o.gitTokenFile, "git-token-file", "", "more git endpoint tokens: `file` with \"USER TOKEN [REPO...]\" per line")
			fs.StringVar(&o.stateDir, "state-dir", "", "`directory` of the daemon's own git token (default $XDG_STATE_HOME/quire)")
			fs.Func("allowed-host", "also answer HTTP requests for host `name` (repeatable; e.g. a name in a reverse proxy)", func(v string) error {
				o.allowedHosts = append(o.allowedHosts, v)
				return nil
			})
			fs.BoolVar(&o.allowCreate, "allow-create", false, "let a push to a new name create a hosted repository (default: only existing ones accept pushes)")
			fs.BoolVar(&o.allowNonFastForward, "allow-non-fast-forward", false, "let a push move main to a commit that does not descend from it (live keeps every agent write either way)")
			fs.StringVar(&o.upstream, "upstream", "", "follow the remote at `URL` (without a credential in it: see --upstream-credential-file)")
			fs.StringVar(&o.upstreamCredentialFile, "upstream-credential-file", "", "the upstream's credential: `file` with \"USER:TOKEN\" or a token, readable by this user only (default $QUIRE_UPSTREAM_TOKEN, else git's credential helpers)")
			fs.DurationVar(&o.poll, "poll", def.Poll, "fetch the upstream every `interval`")
			fs.DurationVar(&o.fetchTimeout, "fetch-timeout", def.FetchTimeout, "give up a fetch of the upstream that has not finished after `duration` (the last good commit is served meanwhile; status shows the failure)")
			fs.DurationVar(&o.writeTimeout, "write-timeout", def.WriteTimeout, "answer a write within `duration` of its arrival, waiting for other writes and the upstream included (504 outcome_unknown when it may have been applied)")
			fs.StringVar(&o.webhookSecretFile, "webhook-secret-file", "", "turn on POST /v1/hooks/git: push webhooks signed with the secret in `file` make the upstream fetch at once")
			fs.StringVar(&o.socket, "socket", "", "unix socket `path` of the local API (default $XDG_RUNTIME_DIR/quire/quire.sock)")
			fs.StringVar(&o.apiListen, "api-listen", "", "also serve the local API on TCP `address` (needs --token-file)")
			fs.StringVar(&o.tokenFile, "token-file", "", "bearer tokens for --api-listen and the console: `file` with a token, its agents and optionally name=\"Full Name\" email=addr per line")
			fs.StringVar(&o.uiListen, "ui-listen", "127.0.0.1:7878", "serve the web console (/ui/) on loopback `address` too ('' for none; it is always on --api-listen); `quire ui` prints a login link")
			fs.StringVar(&o.skillsDir, "skills-dir", "", "managed skills `directory` shared by every agent (<slug>/SKILL.md)")
			fs.StringVar(&o.database, "database", "", "PostgreSQL `URL` of the memory store (default: embedded)")
			o.embedderOptions.define(fs)
			fs.StringVar(&o.cacheDir, "cache-dir", "", "`directory` for the embedding cache and upstream mirrors (default: the user cache directory)")
			fs.StringVar(&o.logLevel, "log-level", "info", "`level`: debug, info, warn or error")
			defineLogFormat(fs, &o.logFormat)
			o.mcpSessions.define(fs)
			o.llm.define(fs)
			return o
		},
		run: runServe,
	}
}

func runServe(ctx context.Context, e *env, opts any, args []string) error {
	o := opts.(*serveOptions)
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	if err := o.check(); err != nil {
		return err
	}
	log, err := newLogger(e.stderr, o.logLevel, o.logFormat)
	if err != nil {
		return err
	}
	started := time.Now()
	tuneGC(e.getenv, log)
	sec, err := o.secrets(e)
	if err != nil {
		return err
	}
	emb, err := o.embedderOptions.open(ctx, e.getenv)
	if err != nil {
		return err
	}
	model, err := o.llm.open(e.getenv, log)
	if err != nil {
		return err
	}
	socket := o.socket
	if socket == "" {
		socket = api.DefaultSocket(e.getenv)
	}
	d, err := daemon.New(ctx, daemon.Options{LLM: model,
		Dirs: o.dirs, ReposDir: o.repos, GitListen: o.gitListen, GitTokens: sec.gitTokens, AllowedHosts: o.allowedHosts, AllowCreate: o.allowCreate, AllowNonFastForward: o.allowNonFastForward, Upstream: o.upstream, UpstreamCredential: sec.upstreamCredential, Poll: o.poll, FetchTimeout: o.fetchTimeout, WriteTimeout: o.writeTimeout,
		Socket: socket, APIListen: o.apiListen, Tokens: sec.tokens, People: sec.people, UIListen: o.uiListen, DatabaseURL: o.database, DatabaseWait: true,
		Embedder: emb, CacheDir: o.cacheDir, Version: buildVersion(), Logger: log,
		SkillsDir: o.skillsDir, HomeDir: e.getenv("HOME"), WebhookSecret: sec.webhookSecret,
		MCPSessions: o.mcpSessions.lim,
	})
	if err != nil {
		return err
	}
	go returnStartupMemory(ctx, d, started, log)
	return d.Run(ctx)
}

// check refuses flag combinations serve cannot run with.
func (o *serveOptions) check() error {
	switch {
	case len(o.dirs) == 0 && o.repos == "" && o.upstream == "":
		return usagef("give a source of truth: --dir, --repos or --upstream")
	case o.upstreamCredentialFile != "" && o.upstream == "":
		return usagef("--upstream-credential-file needs --upstream: the credential is the upstream's")
	case o.apiListen != "" && o.tokenFile == "":
		return usagef("--api-listen needs --token-file: the TCP listener only answers bearer tokens")
	}
	return nil
}

// serveSecrets are the credentials serve reads from the files its flags
// name (never from the command line).
type serveSecrets struct {
	tokens             api.Tokens
	people             api.People
	gitTokens          []daemon.GitToken
	webhookSecret      []byte
	upstreamCredential string
}

// secrets reads the API tokens, the git endpoint's tokens (its own, made
// on first start, and --git-token-file's), the webhook secret and the
// upstream's credential.
func (o *serveOptions) secrets(e *env) (serveSecrets, error) {
	var sec serveSecrets
	var err error
	if o.tokenFile != "" {
		if sec.tokens, sec.people, err = readAPITokens(o.tokenFile); err != nil {
			return sec, err
		}
	}
	if o.repos != "" {
		if sec.gitTokens, err = o.gitEndpointTokens(e); err != nil {
			return sec, err
		}
	}
	if o.webhookSecretFile != "" {
		if sec.webhookSecret, err = readWebhookSecret(o.webhookSecretFile); err != nil {
			return sec, err
		}
	}
	sec.upstreamCredential, err = readUpstreamCredential(o.upstream, o.upstreamCredentialFile, e.getenv)
	return sec, err
}

// readAPITokens reads --token-file.
func readAPITokens(name string) (api.Tokens, api.People, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, fmt.Errorf("--token-file: %w", err)
	}
	defer f.Close()
	tokens, people, err := api.ParseTokenFile(f)
	if err != nil {
		return nil, nil, fmt.Errorf("--token-file %s: %w", name, err)
	}
	return tokens, people, nil
}

// gitEndpointTokens are the tokens the git endpoint accepts: the daemon's
// own (made on first start in the state directory) and --git-token-file's.
func (o *serveOptions) gitEndpointTokens(e *env) ([]daemon.GitToken, error) {
	stateDir := o.stateDir
	if stateDir == "" {
		stateDir = daemon.DefaultStateDir(e.getenv)
	}
	own, err := daemon.LoadGitToken(stateDir, true)
	if err != nil {
		return nil, fmt.Errorf("--state-dir: %w", err)
	}
	tokens := []daemon.GitToken{{Token: own}}
	if o.gitTokenFile != "" {
		more, err := readGitTokens(o.gitTokenFile)
		if err != nil {
			return nil, err
		}
		tokens = append(tokens, more...)
	}
	return tokens, nil
}

// readWebhookSecret reads --webhook-secret-file: the secret, surrounding
// white space (a final newline) removed.
func readWebhookSecret(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--webhook-secret-file: %w", err)
	}
	secret := strings.TrimSpace(string(b))
	if secret == "" {
		return nil, fmt.Errorf("--webhook-secret-file %s is empty: write the webhook's secret in it", path)
	}
	return []byte(secret), nil
}

// upstreamTokenEnv is the environment variable that holds the
// upstream's credential when --upstream-credential-file is not given.
const upstreamTokenEnv = "QUIRE_UPSTREAM_TOKEN"

// readUpstreamCredential reads the credential of upstream (none without
// one): the file given with --upstream-credential-file, which only its
// owner may read or write (it holds a token), else $QUIRE_UPSTREAM_TOKEN;
// "" leaves it to git's credential helpers (or the URL). Errors never
// quote the credential.
func readUpstreamCredential(upstream, path string, getenv func(string) string) (string, error) {
	if upstream == "" {
		return "", nil
	}
	if path == "" {
		return strings.TrimSpace(getenv(upstreamTokenEnv)), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("--upstream-credential-file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("--upstream-credential-file: %w", err)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 && runtime.GOOS != "windows" {
		return "", fmt.Errorf("--upstream-credential-file %s can be read or written by others (mode %v): it holds a token; chmod 600 %s", path, perm, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, 4<<10))
	if err != nil {
		return "", fmt.Errorf("--upstream-credential-file: %w", err)
	}
	cred := strings.TrimSpace(string(b))
	switch {
	case cred == "":
		return "", fmt.Errorf("--upstream-credential-file %s is empty: write USER:TOKEN or a token in it", path)
	case strings.ContainsAny(cred, "\r\n"):
		return "", fmt.Errorf("--upstream-credential-file %s holds more than one line: write one, USER:TOKEN or a token", path)
	}
	return cred, nil
}

// readGitTokens reads --git-token-file: "USER TOKEN [REPO...]" per line
// (USER * accepts any user name; no REPO means every repository); blank
// lines and lines starting with # are skipped.
func readGitTokens(path string) ([]daemon.GitToken, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--git-token-file: %w", err)
	}
	defer f.Close()
	var out []daemon.GitToken
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 2 {
			return nil, fmt.Errorf("--git-token-file %s line %d: want a user name (or *), a token and optionally the repositories it may use", path, n)
		}
		t := daemon.GitToken{User: fields[0], Token: fields[1], Repos: fields[2:]}
		if t.User == "*" {
			t.User = ""
		}
		out = append(out, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--git-token-file %s: %w", path, err)
	}
	return out, nil
}
