package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/quirehq/quire/internal/replace"
	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/memstore"
	"github.com/quirehq/quire/prompt"
)

type searchOptions struct {
	dir, agent, user, rev string
	limit, context        int
	now                   string
	minScore              float64
	textWeight            optionalFloat
	rrf, json             bool
	socket                string
	local                 bool
	embedderOptions
}

func searchCommand() *command {
	return &command{
		name:    "search",
		args:    "QUERY",
		summary: "hybrid search over an agent's memory (MEMORY.md, memory/**/*.md)",
		help: `
Builds the embedded memory index from the workspace (the working tree, or
--rev) and runs a hybrid search: full-text BM25 (English stems; a daily
log's date is indexed with it) and vector candidates, each scored on both
sides, w × text + (1 − w) × vector with w = --text-weight (else the
agent's memory_text_weight, else 0.9), × 1.2 for the user's own memory. Without --user
only agent-level memory is searched; with it, agent-level memory and that
user's. Embeddings are cached in $XDG_CACHE_HOME/quire/embeddings, and the
index of each workspace and agent in $XDG_CACHE_HOME/quire/index/: a later
search re-chunks and embeds only the documents that changed.

Without --dir, --rev and --local, a daemon answering on --socket is asked
instead: it searches what it has deployed and indexed.

Examples:
  quire search "where is lost and found kept" --agent concierge
  quire search "study group" --agent studybuddy --user alice --limit 3 --json`,
		flags: func(fs *flag.FlagSet) any {
			o := &searchOptions{}
			fs.StringVar(&o.dir, "dir", "", "workspace `directory` (default: the current directory, or a running daemon)")
			fs.StringVar(&o.agent, "agent", "", "agent `name` (may be left out when the workspace has one agent)")
			fs.StringVar(&o.user, "user", "", "user `id` whose own memory is searched too")
			fs.StringVar(&o.rev, "rev", "", "read the workspace at git `revision` REV")
			fs.IntVar(&o.limit, "limit", memory.DefaultLimit, "number of `hits`")
			fs.Float64Var(&o.minScore, "min-score", 0, "drop hits scoring below `score`")
			fs.IntVar(&o.context, "context", 0, fmt.Sprintf("also print `n` neighbouring chunks of the file on each side of a hit, marked as context (0 to %d)", memory.MaxContext))
			fs.StringVar(&o.now, "now", "", "the `time` relative dates in the query count from (RFC 3339 or YYYY-MM-DD; default now)")
			fs.Var(&o.textWeight, "text-weight", "weight of full text against vectors, `0..1` (default: the agent's memory_text_weight, else 0.9)")
			fs.BoolVar(&o.rrf, "rrf", false, "rank by reciprocal rank fusion instead of weighted scores")
			fs.BoolVar(&o.json, "json", false, "print JSON")
			fs.StringVar(&o.socket, "socket", "", "unix socket `path` of a running daemon (default $XDG_RUNTIME_DIR/quire/quire.sock)")
			fs.BoolVar(&o.local, "local", false, "never ask a running daemon; build the embedded index")
			o.embedderOptions.define(fs)
			return o
		},
		run: runSearch,
	}
}

func runSearch(ctx context.Context, e *env, opts any, args []string) error {
	o := opts.(*searchOptions)
	if len(args) != 1 {
		return usagef("give one QUERY (quote a query of several words)")
	}
	if o.limit <= 0 {
		return usagef("--limit must be positive")
	}
	if w := o.textWeight.v; w != nil && !(*w >= 0 && *w <= 1) {
		return usagef("--text-weight must be between 0 and 1")
	}
	if o.dir == "" && o.rev == "" && !o.local {
		if done, err := searchDaemon(ctx, e, o, args[0]); done {
			return err
		}
	}
	if o.dir == "" {
		o.dir = "."
	}
	ws, err := openWorkspace(o.dir, o.rev)
	if err != nil {
		return err
	}
	a, err := ws.Agent(o.agent)
	if err != nil {
		return err
	}
	docs, problems, err := memory.Documents(ws.FS(), a.Dir)
	if err != nil {
		return err
	}
	for _, p := range problems {
		fmt.Fprintf(e.stderr, "%s: warning: %s\n", displayPath(o.dir, joinAgent(a.Dir, p.Path)), p.Message)
	}
	store, err := localIndex(ctx, e, o, a.Name, docs)
	if err != nil {
		return err
	}
	defer store.Close()
	now, err := o.nowTime()
	if err != nil {
		return err
	}
	q := memory.Query{Text: args[0], User: o.user, Limit: o.limit, MinScore: o.minScore, TextWeight: a.Config.MemoryTextWeight, Context: o.context, Now: now}
	if w := o.weight(); w != nil {
		q.TextWeight = w
	}
	if o.rrf {
		q.Fusion = memory.RRF
	}
	hits, err := store.Search(ctx, a.Name, q)
	if err != nil {
		return err
	}
	return printHits(e, o, a, args[0], hits, len(docs))
}

// joinAgent joins a path relative to an agent directory to it.
func joinAgent(dir, p string) string {
	if dir == "." || dir == "" {
		return p
	}
	return dir + "/" + p
}

// weight returns --text-weight, nil when it was not given.
func (o *searchOptions) weight() *float64 {
	if o.textWeight.v == nil {
		return nil
	}
	w := *o.textWeight.v
	return &w
}

// optionalFloat is a number flag that may be left out: its help shows
// no default, and nil says it was not given.
type optionalFloat struct{ v *float64 }

func (f *optionalFloat) String() string {
	if f == nil || f.v == nil {
		return ""
	}
	return strconv.FormatFloat(*f.v, 'g', -1, 64)
}

func (f *optionalFloat) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return errors.New("not a number")
	}
	f.v = &v
	return nil
}

// indexSnapshot is where `quire search` keeps the embedded index of an
// agent of a workspace (and revision) between runs, beside the embedding
// cache: "" when there is no cache directory.
func indexSnapshot(cache, dir, rev, agent string, emb memory.Embedder) string {
	if cache == "" {
		return ""
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	key := sha256.Sum256([]byte(abs + "\x00" + rev + "\x00" + agent + "\x00" + emb.Model()))
	return filepath.Join(filepath.Dir(cache), "index", hex.EncodeToString(key[:12]))
}

// saveSnapshot writes the agent's index to file atomically; failures are
// ignored (the next search rebuilds it).
func saveSnapshot(store *memstore.Store, agent, file string) {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".index-*")
	if err != nil {
		return
	}
	werr := store.Save(agent, tmp)
	if err := errors.Join(werr, tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return
	}
	if replace.File(tmp.Name(), file) != nil {
		os.Remove(tmp.Name())
	}
}

// localIndex indexes docs, the agent's memory, in an embedded store,
// starting from the snapshot a previous search left in the cache.
func localIndex(ctx context.Context, e *env, o *searchOptions, agent string, docs []memory.Document) (*memstore.Store, error) {
	emb, err := o.embedderOptions.open(ctx, e.getenv)
	if err != nil {
		return nil, err
	}
	cache := cacheFile(e.getenv)
	store, err := memstore.New(memstore.Options{Embedder: emb, CacheFile: cache})
	if err != nil {
		return nil, err
	}
	snapshot := indexSnapshot(cache, o.dir, o.rev, agent, emb)
	loaded := false
	if f, err := os.Open(snapshot); err == nil {
		loaded = store.Load(agent, f) == nil
		f.Close()
	}
	st, err := store.Index(ctx, agent, "", docs)
	if err != nil {
		store.Close()
		return nil, err
	}
	if snapshot != "" && (!loaded || st.Changed > 0 || st.Removed > 0) && st.EmbedError == nil {
		saveSnapshot(store, agent, snapshot) // a snapshot only saves time
	}
	if st.EmbedError != nil {
		fmt.Fprintf(e.stderr, "warning: %v; searching full text only\n", st.EmbedError)
	}
	return store, nil
}

// printHits writes the hits of query, as JSON with --json; none is
// exitFindings.
func printHits(e *env, o *searchOptions, a *prompt.Agent, query string, hits []memory.Hit, searched int) error {
	if o.json {
		return writeJSON(e.stdout, struct {
			Agent string       `json:"agent"`
			Query string       `json:"query"`
			Hits  []memory.Hit `json:"hits"`
		}{a.Name, query, hits})
	}
	if len(hits) == 0 {
		fmt.Fprintf(e.stderr, "no memory matches %q (%d documents searched)\n", query, searched)
		return exitError{exitFindings}
	}
	for _, h := range hits {
		loc := joinAgent(a.Dir, h.Path)
		if h.User != "" {
			if dir, err := a.UserDir(h.User); err == nil {
				loc = joinAgent(dir, h.Path)
			}
		}
		fmt.Fprintf(e.stdout, "%s:%d-%d  %.3f  %s\n", displayPath(o.dir, loc), h.StartLine, h.EndLine, h.Score, h.Scope)
		printHitText(e, h)
	}
	return nil
}

// printHitText prints a hit's text indented, and its context, if any,
// under a line that says it is context and where it lies.
func printHitText(e *env, h memory.Hit) {
	for _, line := range strings.Split(h.Text, "\n") {
		fmt.Fprintf(e.stdout, "    %s\n", line)
	}
	for _, c := range h.Context {
		fmt.Fprintf(e.stdout, "    -- context %s the hit, lines %d-%d:\n", c.Side, c.StartLine, c.EndLine)
		for _, line := range strings.Split(c.Text, "\n") {
			fmt.Fprintf(e.stdout, "    | %s\n", line)
		}
	}
}

// nowTime returns --now (zero when not given: the clock's time).
func (o *searchOptions) nowTime() (time.Time, error) {
	if o.now == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339, time.DateOnly} {
		if t, err := time.ParseInLocation(layout, o.now, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, usagef("--now %q: give a time as 2023-05-08T18:30:00Z or a day as 2023-05-08", o.now)
}
