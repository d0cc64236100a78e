package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"time"

	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/pgstore"
)

type indexOptions struct {
	dir, agent, rev, database, schema string
	embedderOptions
}

func indexCommand() *command {
	return &command{
		name:    "index",
		summary: "mirror a repository's memory into PostgreSQL (one shot)",
		help: `
Indexes the memory documents of every agent (or --agent) into the PostgreSQL
store at --database: changed documents are re-chunked and embedded,
unchanged ones skipped, deleted ones removed, and the agent's indexed commit
recorded in the same transaction. In a git repository the workspace is read
at --rev (default HEAD); elsewhere the working tree is indexed without a
commit. Chunks left without vectors by an embedder outage are back-filled
at the end.

Examples:
  quire index --database postgres://quire@localhost/quire
  quire index --database "$DB" --agent concierge --embedder openai \
      --embed-url http://localhost:11434 --embed-model nomic-embed-text`,
		flags: func(fs *flag.FlagSet) any {
			o := &indexOptions{}
			fs.StringVar(&o.dir, "dir", ".", "workspace `directory`")
			fs.StringVar(&o.agent, "agent", "", "index only this agent `name`")
			fs.StringVar(&o.rev, "rev", "HEAD", "git `revision` to index (ignored outside a git repository)")
			fs.StringVar(&o.database, "database", "", "PostgreSQL `URL` (postgres://…)")
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
	if o.database == "" {
		return usagef("--database is required (or set QUIRE_DATABASE)")
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
	emb, err := o.embedderOptions.open(ctx, e.getenv)
	if err != nil {
		return err
	}
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
		docs, problems, err := memory.Documents(ws.FS(), a.Dir)
		if err != nil {
			return err
		}
		for _, p := range problems {
			fmt.Fprintf(e.stderr, "%s: warning: %s\n", displayPath(o.dir, joinAgent(a.Dir, p.Path)), p.Message)
		}
		t0 := time.Now()
		st, err := store.Index(ctx, a.Name, commit, docs)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "%s %s: %d documents (%d changed, %d unchanged, %d removed), %d chunks written (%.1fs)\n",
			progress(i+1, len(agents)), a.Name, st.Documents, st.Changed, st.Unchanged, st.Removed, st.Chunks, time.Since(t0).Seconds())
		if st.EmbedError != nil {
			fmt.Fprintf(e.stderr, "    warning: %v (%d chunks wait for vectors)\n", st.EmbedError, st.Pending)
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
