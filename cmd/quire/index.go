package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/memstore"
	"github.com/quirehq/quire/memory/pgstore"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/workspace"
)

type indexOptions struct {
	dir, agent, rev, database, schema string
	embedderOptions
}

func indexCommand() *command {
	return &command{
		name:    "index",
		summary: "index a workspace's memory into PostgreSQL, or into the embedded index (one shot)",
		help: `
Indexes the memory documents of every agent (or --agent) into the PostgreSQL
store at --database: changed documents are re-chunked and embedded,
unchanged ones skipped, deleted ones removed, and the agent's indexed commit
recorded in the same transaction. Chunks left without vectors by an embedder
outage are back-filled at the end.

Without --database (and QUIRE_DATABASE) the embedded index is built instead:
the one ` + "`quire search --local`" + ` reads from $XDG_CACHE_HOME/quire/index, so a
later search of the same workspace and revision starts from it.

In a git repository the workspace is read at --rev (default HEAD); memory
files whose working copy differs from that commit are not indexed, and
each is named on stderr (commit them, or pass --rev '' to index the working
tree). Elsewhere the working tree is indexed without a commit.

Examples:
  quire index                      # the embedded index of the current directory
  quire index --database postgres://quire@localhost/quire
  quire index --database "$DB" --agent concierge --embedder openai \
      --embed-url http://localhost:11434 --embed-model nomic-embed-text`,
		flags: func(fs *flag.FlagSet) any {
			o := &indexOptions{}
			fs.StringVar(&o.dir, "dir", ".", "workspace `directory`")
			fs.StringVar(&o.agent, "agent", "", "index only this agent `name`")
			fs.StringVar(&o.rev, "rev", "HEAD", "git `revision` to index (ignored outside a git repository)")
			fs.StringVar(&o.database, "database", "", "PostgreSQL `URL` (postgres://…); without it, the embedded index")
			fs.StringVar(&o.schema, "schema", "quire", "database `schema` for Quire's tables")
			o.embedderOptions.define(fs)
			return o
		},
		run: runIndex,
	}
}

func runIndex(ctx context.Context, e *env, opts any, args []string) error {
	o := opts.(*indexOptions)
	if len(args) != 0 {
		return usagef("index takes no arguments")
	}
	commit, rev := "", ""
	if abs, err := filepath.Abs(o.dir); err == nil && o.rev != "" {
		if repo, err := gitsync.Open(abs); err == nil {
			h, err := repo.Resolve(o.rev)
			if err != nil {
				return fmt.Errorf("--rev %s: %w", o.rev, err)
			}
			commit, rev = h.String(), h.String()
		}
	}
	ws, err := openWorkspace(o.dir, rev)
	if err != nil {
		return err
	}
	agents := ws.Agents()
	if o.agent != "" {
		a, err := ws.Agent(o.agent)
		if err != nil {
			return err
		}
		agents = agents[:0:0]
		agents = append(agents, a)
	}
	if commit != "" {
		warnUncommitted(e, o.dir, ws, agents)
	}
	emb, err := o.embedderOptions.open(ctx, e.getenv)
	if err != nil {
		return err
	}
	if o.database == "" {
		return indexEmbedded(ctx, e, o.dir, rev, commit, ws, agents, emb)
	}
	return indexPostgres(ctx, e, o, commit, ws, agents, emb)
}

// indexPostgres indexes the memory of agents in the PostgreSQL store of
// --database, one agent at a time with a line each, then back-fills the
// vectors an embedder failure left out.
func indexPostgres(ctx context.Context, e *env, o *indexOptions, commit string, ws *prompt.Workspace, agents []*prompt.Agent, emb memory.Embedder) error {
	store, err := pgstore.Open(ctx, pgstore.Options{URL: o.database, Schema: o.schema, Embedder: emb})
	if err != nil {
		return err
	}
	defer store.Close()

	start := time.Now()
	var total memory.IndexStats
	source := "working tree"
	if commit != "" {
		source = "commit " + commit[:12]
	}
	fmt.Fprintf(e.stderr, "indexing %d agent(s) from %s with embedder %s\n", len(agents), source, emb.Model())
	for i, a := range agents {
		st, err := indexAgent(ctx, e, o.dir, store, a, ws, commit, progress(i+1, len(agents)))
		if err != nil {
			return err
		}
		total.Documents += st.Documents
		total.Changed += st.Changed
		total.Unchanged += st.Unchanged
		total.Removed += st.Removed
		total.Chunks += st.Chunks
		total.Pending += st.Pending
	}
	backfilled := 0
	if total.Pending > 0 {
		backfilled, err = store.Backfill(ctx)
		if err != nil {
			fmt.Fprintf(e.stderr, "warning: back-fill: %v\n", err)
		}
	}
	fmt.Fprintf(e.stdout, "indexed %d agent(s): %d documents, %d changed, %d unchanged, %d removed, %d chunks written, %d vectors back-filled in %.1fs\n",
		len(agents), total.Documents, total.Changed, total.Unchanged, total.Removed, total.Chunks, backfilled, time.Since(start).Seconds())
	return nil
}

// indexAgent indexes one agent's memory and says so in a line that
// starts with step ("[2/5]").
func indexAgent(ctx context.Context, e *env, dir string, store *pgstore.Store, a *prompt.Agent, ws *prompt.Workspace, commit, step string) (memory.IndexStats, error) {
	docs, problems, err := memory.Documents(ws.FS(), a.Dir)
	if err != nil {
		return memory.IndexStats{}, err
	}
	for _, p := range problems {
		fmt.Fprintf(e.stderr, "%s: warning: %s\n", displayPath(dir, joinAgent(a.Dir, p.Path)), p.Message)
	}
	t0 := time.Now()
	st, err := store.Index(ctx, a.Name, commit, docs)
	if err != nil {
		return st, err
	}
	fmt.Fprintf(e.stderr, "%s %s: %d documents (%d changed, %d unchanged, %d removed), %d chunks written (%.1fs)\n",
		step, a.Name, st.Documents, st.Changed, st.Unchanged, st.Removed, st.Chunks, time.Since(t0).Seconds())
	if st.EmbedError != nil {
		fmt.Fprintf(e.stderr, "    warning: %v (%d chunks wait for vectors)\n", st.EmbedError, st.Pending)
	}
	return st, nil
}

// progress renders a 20-cell bar for step n of total.
func progress(n, total int) string {
	const width = 20
	filled := width * n / total
	bar := make([]byte, width)
	for i := range bar {
		if i < filled {
			bar[i] = '#'
		} else {
			bar[i] = '.'
		}
	}
	return fmt.Sprintf("[%s] %d/%d", bar, n, total)
}

// warnUncommitted names the memory files whose working copy differs from
// the commit being indexed: they are not indexed, and saying nothing would
// leave a user searching for what they just wrote.
func warnUncommitted(e *env, dir string, committed *prompt.Workspace, agents []*prompt.Agent) {
	tree := workspace.DirFS(dir)
	for _, a := range agents {
		want, _, err := memory.Documents(committed.FS(), a.Dir)
		if err != nil {
			continue
		}
		have, _, err := memory.Documents(tree, a.Dir)
		if err != nil {
			continue
		}
		byKey := func(docs []memory.Document) map[string]string {
			m := make(map[string]string, len(docs))
			for _, d := range docs {
				m[d.User+"\x00"+d.Path] = d.Hash
			}
			return m
		}
		inCommit, inTree := byKey(want), byKey(have)
		var changed []string
		for _, d := range have {
			if inCommit[d.User+"\x00"+d.Path] != d.Hash {
				changed = append(changed, docPath(a, d))
			}
		}
		for _, d := range want {
			if _, ok := inTree[d.User+"\x00"+d.Path]; !ok {
				changed = append(changed, docPath(a, d))
			}
		}
		sort.Strings(changed)
		for _, p := range changed {
			fmt.Fprintf(e.stderr, "%s: warning: not committed, so not indexed: commit it, or pass --rev '' to index the working tree\n", displayPath(dir, p))
		}
	}
}

// docPath is a memory document's path in the workspace.
func docPath(a *prompt.Agent, d memory.Document) string {
	if d.User != "" {
		if dir, err := a.UserDir(d.User); err == nil {
			return joinAgent(dir, d.Path)
		}
	}
	return joinAgent(a.Dir, d.Path)
}

// indexEmbedded builds the embedded index of each agent and keeps it where
// `quire search --local` looks for it.
func indexEmbedded(ctx context.Context, e *env, dir, rev, commit string, ws *prompt.Workspace, agents []*prompt.Agent, emb memory.Embedder) error {
	cache := cacheFile(e.getenv)
	if cache == "" {
		return fmt.Errorf("the embedded index needs a cache directory: set XDG_CACHE_HOME or HOME, or give --database")
	}
	source := "working tree"
	if commit != "" {
		source = "commit " + commit[:12]
	}
	fmt.Fprintf(e.stderr, "indexing %d agent(s) from %s into the embedded index with embedder %s\n", len(agents), source, emb.Model())
	start := time.Now()
	var total memory.IndexStats
	for i, a := range agents {
		docs, problems, err := memory.Documents(ws.FS(), a.Dir)
		if err != nil {
			return err
		}
		for _, p := range problems {
			fmt.Fprintf(e.stderr, "%s: warning: %s\n", displayPath(dir, joinAgent(a.Dir, p.Path)), p.Message)
		}
		store, err := memstore.New(memstore.Options{Embedder: emb, CacheFile: cache})
		if err != nil {
			return err
		}
		snapshot := indexSnapshot(cache, dir, rev, a.Name, emb)
		if f, err := os.Open(snapshot); err == nil {
			_ = store.Load(a.Name, f) // a stale or damaged snapshot is rebuilt
			f.Close()
		}
		st, err := store.Index(ctx, a.Name, commit, docs)
		if err == nil && st.EmbedError == nil {
			saveSnapshot(store, a.Name, snapshot)
		}
		store.Close()
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "%s %s: %d documents (%d changed, %d unchanged, %d removed), %d chunks written\n",
			progress(i+1, len(agents)), a.Name, st.Documents, st.Changed, st.Unchanged, st.Removed, st.Chunks)
		if st.EmbedError != nil {
			fmt.Fprintf(e.stderr, "    warning: %v; the index is not kept\n", st.EmbedError)
		}
		total.Documents += st.Documents
		total.Changed += st.Changed
		total.Chunks += st.Chunks
	}
	fmt.Fprintf(e.stdout, "indexed %d agent(s) into the embedded index: %d documents, %d changed, %d chunks written in %.1fs\n",
		len(agents), total.Documents, total.Changed, total.Chunks, time.Since(start).Seconds())
	return nil
}
