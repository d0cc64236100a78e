// Package pgstore is the memory store on PostgreSQL with pgvector: several
// daemons may share one database. It owns the schema (embedded, versioned
// migrations), the documents and chunks tables scoped by agent and user, a
// tsvector of each chunk's full-text terms (TextVector: memory.Analyzer's
// terms, those of queries and of the embedded store) with a GIN index, the
// per-agent term statistics its BM25 ranking reads (kept in the indexing
// transaction), and an HNSW cosine index whose dimension follows the
// configured embedder.
// It is the only package that imports pgx and pgvector.
package pgstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"
	pgxvec "github.com/pgvector/pgvector-go/pgx"

	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/bm25"
)

//go:embed migrations/*.sql
var migrations embed.FS

// DefaultEFSearch is hnsw.ef_search for vector queries: with
// hnsw.iterative_scan = relaxed_order it keeps scoped top-k queries full
// (without iterative scan a scoped top-10 can return ~4 rows).
const DefaultEFSearch = 100

// Options configures a Store.
type Options struct {
	// URL is the PostgreSQL connection string.
	URL string
	// Schema holds Quire's tables; "" means "quire". It is created when
	// missing. The vector extension lives in public (created there when
	// missing, which needs the privilege to do so).
	Schema string
	// Embedder embeds chunks and queries; nil means memory.None{}.
	Embedder memory.Embedder
	// EFSearch is hnsw.ef_search; 0 means DefaultEFSearch.
	EFSearch int
	// MaxConns caps the pool; 0 means pgxpool's default.
	MaxConns int32
	// Logger receives warnings; nil discards them.
	Logger *slog.Logger
	// Older, when set, reports whether commit is older than indexed (an
	// ancestor of it) for agent: Index then refuses with ErrOlder instead
	// of indexing an older commit over a newer one (a daemon restarting
	// with a stale mirror, while another indexed what it has not fetched
	// yet). It is asked under the agent's index lock, so the check and the
	// write are one step across daemons.
	Older func(agent, commit, indexed string) bool
}

// ErrOlder is an Index of a commit older than the one the store holds
// for the agent (see Options.Older): nothing was written.
var ErrOlder = errors.New("the store holds a newer commit")

// Store is the PostgreSQL memory store. It is safe for concurrent use.
type Store struct {
	pool       *pgxpool.Pool
	schema     string // quoted identifier
	schemaName string
	emb        memory.Embedder
	log        *slog.Logger
	terms      memory.Analyzer
	older      func(agent, commit, indexed string) bool

	// Background work: HNSW builds after bulk loads.
	bgCtx    context.Context
	bgCancel context.CancelFunc
	bg       sync.WaitGroup
}

var _ memory.Store = (*Store)(nil)

// Open connects, applies migrations and matches the vector column to the
// embedder: when the embedder's model or dimension differs from the one
// the stored vectors came from, the vectors are dropped and the HNSW index
// is rebuilt for the new dimension; Backfill then re-embeds every chunk.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if opts.Schema == "" {
		opts.Schema = "quire"
	}
	if opts.Embedder == nil {
		opts.Embedder = memory.None{}
	}
	if opts.EFSearch <= 0 {
		opts.EFSearch = DefaultEFSearch
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg, err := pgxpool.ParseConfig(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("parse database URL: %w", err)
	}
	schema := pgx.Identifier{opts.Schema}.Sanitize()
	cfg.ConnConfig.RuntimeParams["search_path"] = opts.Schema + ", public"
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}

	// The extension must exist before the pool registers its types.
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	if _, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public"); err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("create extension vector (install pgvector, or have a superuser run CREATE EXTENSION vector): %w", err)
	}
	if err := migrate(ctx, conn, opts.Schema); err != nil {
		conn.Close(ctx)
		return nil, err
	}
	conn.Close(ctx)

	ef := opts.EFSearch
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		if err := pgxvec.RegisterTypes(ctx, c); err != nil {
			return fmt.Errorf("register vector types: %w", err)
		}
		_, err := c.Exec(ctx, "SET hnsw.ef_search = "+strconv.Itoa(ef)+"; SET hnsw.iterative_scan = relaxed_order")
		return err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	s := &Store{pool: pool, schema: schema, schemaName: opts.Schema, emb: opts.Embedder, log: log, older: opts.Older}
	s.bgCtx, s.bgCancel = context.WithCancel(context.Background())
	if err := s.matchEmbedder(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	if memory.Enabled(s.emb) {
		// A build a crash or Close interrupted leaves no index, or an
		// invalid one: build it again, in the background.
		s.buildHNSW([]string{hnswIndex})
	}
	return s, nil
}

// migrate applies the embedded migrations not yet recorded in
// schema_migrations, each in its own transaction, under an advisory lock.
//
// Version 2 (002_managed_skills.sql) is retired: it created the managed
// skill tables (skills, skill_versions, skill_agent_grants,
// skill_user_grants), which nothing reads any more. A database that
// applied it keeps them untouched, with their rows and any embedding
// column: dropping them would drop user data. Do not reuse the number.
func migrate(ctx context.Context, conn *pgx.Conn, schema string) error {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext('quire-migrate:' || $1))", schema); err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	ident := pgx.Identifier{schema}.Sanitize()
	if _, err := tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+ident+
		"; CREATE TABLE IF NOT EXISTS "+ident+".schema_migrations (version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"); err != nil {
		return fmt.Errorf("migrate: create schema %s: %w", schema, err)
	}
	applied := map[int]bool{}
	rows, err := tx.Query(ctx, "SELECT version FROM "+ident+".schema_migrations")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		applied[v] = true
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		num, _, _ := strings.Cut(base, "_")
		version, err := strconv.Atoi(num)
		if err != nil {
			return fmt.Errorf("migrate: migration %s has no version number", base)
		}
		if applied[version] {
			continue
		}
		sql, err := migrations.ReadFile(name)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "SET LOCAL search_path = "+ident+", public"); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if _, err := tx.Exec(ctx, string(sql)); err != nil {
			return fmt.Errorf("migrate: apply %s: %w", base, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO "+ident+".schema_migrations (version, name) VALUES ($1, $2)", version, base); err != nil {
			return fmt.Errorf("migrate: record %s: %w", base, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("migrate: commit: %w", err)
	}
	return nil
}

// matchEmbedder makes chunks.embedding a vector of the embedder's
// dimension with an HNSW cosine index, dropping vectors of another model.
func (s *Store) matchEmbedder(ctx context.Context) error {
	model, dims := s.emb.Model(), s.emb.Dimensions()
	if !memory.Enabled(s.emb) {
		model, dims = "none", 0
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext('quire-embedder:' || $1))", s.schema); err != nil {
			return fmt.Errorf("lock embedder config: %w", err)
		}
		var oldModel string
		var oldDims int
		err := tx.QueryRow(ctx, "SELECT model, dimensions FROM embedder_config").Scan(&oldModel, &oldDims)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("read embedder config: %w", err)
		}
		if err == nil && oldModel == model && oldDims == dims {
			return nil
		}
		if err == nil {
			s.log.Info("embedder changed; dropping vectors to re-embed", "from", oldModel, "to", model, "dimensions", dims)
		}
		stmts := []string{"DROP INDEX IF EXISTS chunks_embedding_hnsw", "ALTER TABLE chunks DROP COLUMN IF EXISTS embedding"}
		if dims > 0 {
			stmts = append(stmts,
				fmt.Sprintf("ALTER TABLE chunks ADD COLUMN embedding vector(%d)", dims),
				"CREATE INDEX chunks_embedding_hnsw ON chunks USING hnsw (embedding vector_cosine_ops)")
		}
		stmts = append(stmts, "DELETE FROM embedder_config")
		for _, q := range stmts {
			if _, err := tx.Exec(ctx, q); err != nil {
				return fmt.Errorf("configure embedder %s (%d dimensions): %s: %w", model, dims, q, err)
			}
		}
		if _, err := tx.Exec(ctx, "INSERT INTO embedder_config (model, dimensions) VALUES ($1, $2)", model, dims); err != nil {
			return fmt.Errorf("record embedder config: %w", err)
		}
		return nil
	})
}

// Close stops background index builds and closes the pool.
func (s *Store) Close() error {
	s.bgCancel()
	s.bg.Wait()
	s.pool.Close()
	return nil
}

// hnswIndex creates the vector index (the embedding column's dimension
// comes from the column).
const hnswIndex = "CREATE INDEX chunks_embedding_hnsw ON chunks USING hnsw (embedding vector_cosine_ops)"

// buildHNSW builds the vector index with CREATE INDEX CONCURRENTLY in the
// background, once a bulk load has committed: the chunks are searchable
// at once (an exact vector scan serves until the index exists), and the
// index is built without blocking writes. An invalid index left by an
// interrupted build is dropped first. Several daemons sharing the
// database may race here; IF NOT EXISTS makes the loser's build a no-op.
func (s *Store) buildHNSW(defs []string) {
	if len(defs) == 0 {
		return
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		ctx := s.bgCtx
		start := time.Now()
		conn, err := s.pool.Acquire(ctx)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("building the vector index failed; vector search scans exactly until it exists", "err", err)
			}
			return
		}
		defer conn.Release()
		// One statement per Exec: CONCURRENTLY cannot run in the implicit
		// transaction of a multi-statement query.
		var invalid bool
		err = conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
			WHERE x.indrelid = 'chunks'::regclass AND i.relname = 'chunks_embedding_hnsw' AND NOT x.indisvalid)`).Scan(&invalid)
		if err == nil && invalid {
			_, err = conn.Exec(ctx, "DROP INDEX CONCURRENTLY IF EXISTS chunks_embedding_hnsw")
		}
		for _, q := range []string{"SET maintenance_work_mem = '1GB'", "SET max_parallel_maintenance_workers = 2"} {
			if err == nil {
				_, err = conn.Exec(ctx, q)
			}
		}
		for _, def := range defs {
			if err != nil {
				break
			}
			_, err = conn.Exec(ctx, strings.Replace(def, "CREATE INDEX ", "CREATE INDEX CONCURRENTLY IF NOT EXISTS ", 1))
		}
		if _, rerr := conn.Exec(context.Background(), "RESET maintenance_work_mem"); rerr != nil {
			conn.Conn().Close(context.Background()) // do not hand the setting on
		} else {
			conn.Exec(context.Background(), "RESET max_parallel_maintenance_workers")
		}
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("building the vector index failed; vector search scans exactly until it exists", "err", err)
			}
			return
		}
		if d := time.Since(start); d > time.Second {
			s.log.Info("vector index built", "took", d)
		}
	}()
}

// WaitIndexBuilds waits for background index builds started so far.
func (s *Store) WaitIndexBuilds() { s.bg.Wait() }

type docRow struct {
	id   int64
	hash string
}

type docKey struct{ user, path string }

// Index implements memory.Store. Everything happens in one transaction
// under a transaction-scoped advisory lock on the agent: the agent's
// documents, chunks and indexed commit change together or not at all, and
// a second process waiting on the lock finds the commit already indexed
// and does nothing. New chunks are embedded before the transaction begins
// (vectors the database already holds for the same chunk text are reused),
// so the embedder's latency never holds the lock.
func (s *Store) Index(ctx context.Context, agent, commit string, docs []memory.Document) (memory.IndexStats, error) {
	stats := memory.IndexStats{Documents: len(docs)}
	run := &embedRun{}
	if memory.Enabled(s.emb) {
		if err := s.preEmbed(ctx, agent, commit, docs, run); err != nil {
			return stats, fmt.Errorf("index %s@%s: %w", agent, commit, err)
		}
	}
	var deferred []string // index builds for after the commit
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		stats = memory.IndexStats{Documents: len(docs)}
		deferred = nil
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext('quire-index:' || $1 || ':' || $2))", s.schema, agent); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		var indexed string
		err := tx.QueryRow(ctx, "SELECT indexed_commit FROM agents WHERE agent = $1", agent).Scan(&indexed)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if commit != "" && indexed == commit {
			stats.Unchanged = len(docs)
			return nil
		}
		// Monotonic per agent: never an older commit over a newer one.
		if commit != "" && indexed != "" && s.older != nil && s.older(agent, commit, indexed) {
			return fmt.Errorf("%w (%s) than %s", ErrOlder, indexed, commit)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO agents (agent) VALUES ($1) ON CONFLICT DO NOTHING", agent); err != nil {
			return fmt.Errorf("register agent: %w", err)
		}
		delta := &termDelta{df: map[string]int{}}
		existing := map[docKey]docRow{}
		rows, err := tx.Query(ctx, "SELECT id, user_id, path, hash FROM documents WHERE agent = $1", agent)
		if err != nil {
			return err
		}
		for rows.Next() {
			var k docKey
			var r docRow
			if err := rows.Scan(&r.id, &k.user, &k.path, &r.hash); err != nil {
				return err
			}
			existing[k] = r
		}
		if err := rows.Err(); err != nil {
			return err
		}
		seen := map[docKey]bool{}
		var drop []int64
		var changed []memory.Document
		for _, d := range docs {
			k := docKey{d.User, d.Path}
			if seen[k] {
				return fmt.Errorf("document %s of user %q appears twice", d.Path, d.User)
			}
			seen[k] = true
			old, ok := existing[k]
			if ok && old.hash == d.Hash {
				stats.Unchanged++
				continue
			}
			if ok {
				drop = append(drop, old.id)
			}
			stats.Changed++
			changed = append(changed, d)
		}
		for k, r := range existing {
			if !seen[k] {
				drop = append(drop, r.id)
				stats.Removed++
			}
		}
		if len(drop) > 0 {
			if err := delta.subtract(ctx, tx, drop); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "DELETE FROM documents WHERE id = ANY($1)", drop); err != nil {
				return fmt.Errorf("delete documents: %w", err)
			}
		}
		if testHookInTransaction != nil {
			testHookInTransaction()
		}
		if len(changed) > 0 {
			if err := s.insert(ctx, tx, agent, changed, &stats, run, delta, &deferred); err != nil {
				return err
			}
		}
		if err := delta.apply(ctx, tx, agent); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO agents (agent, indexed_commit, indexed_at) VALUES ($1, $2, now())
			ON CONFLICT (agent) DO UPDATE SET indexed_commit = excluded.indexed_commit, indexed_at = excluded.indexed_at`, agent, commit)
		return err
	})
	if err != nil {
		return stats, fmt.Errorf("index %s@%s: %w", agent, commit, err)
	}
	s.buildHNSW(deferred)
	return stats, nil
}

// insert writes changed documents and their chunks (with CopyFrom),
// reusing stored vectors of identical chunks and embedding the rest.
func (s *Store) insert(ctx context.Context, tx pgx.Tx, agent string, docs []memory.Document, stats *memory.IndexStats, run *embedRun, delta *termDelta, deferred *[]string) error {
	users := make([]string, len(docs))
	paths := make([]string, len(docs))
	hashes := make([]string, len(docs))
	for i, d := range docs {
		users[i], paths[i], hashes[i] = d.User, d.Path, d.Hash
	}
	rows, err := tx.Query(ctx, `INSERT INTO documents (agent, user_id, path, hash)
		SELECT $1, u, p, h FROM unnest($2::text[], $3::text[], $4::text[]) AS t(u, p, h)
		RETURNING id, user_id, path`, agent, users, paths, hashes)
	if err != nil {
		return fmt.Errorf("insert documents: %w", err)
	}
	ids := map[docKey]int64{}
	for rows.Next() {
		var id int64
		var k docKey
		if err := rows.Scan(&id, &k.user, &k.path); err != nil {
			return err
		}
		ids[k] = id
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("insert documents: %w", err)
	}

	var chunks []memory.Chunk
	for _, d := range docs {
		chunks = append(chunks, d.Chunks()...)
	}
	stats.Chunks = len(chunks)
	enabled := memory.Enabled(s.emb)
	var vectors [][]float32
	if enabled {
		texts := make([]string, len(chunks))
		chunkHashes := make([]string, len(chunks))
		for i, c := range chunks {
			texts[i], chunkHashes[i] = c.Text, c.Hash
		}
		if err := loadStoredVectors(ctx, tx, s.emb.Model(), &run.cache, chunkHashes); err != nil {
			return err
		}
		if run.err == nil {
			// Normally every vector is in the cache by now (preEmbed).
			vectors, err = memory.EmbedCached(ctx, s.emb, &run.cache, texts, chunkHashes)
		} else {
			vectors, err = cachedOnly(&run.cache, s.emb.Model(), chunkHashes), run.err
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			stats.EmbedError = err
			s.log.Warn("embedder failed; text indexed, vectors pending", "agent", agent, "err", err)
		}
		for _, v := range vectors {
			if v == nil {
				stats.Pending++
			} else {
				stats.Embedded++
			}
		}
	}
	// A bulk load builds the indexes once afterwards: maintaining them row
	// by row (the HNSW index above all) costs much more. The DDL is part of
	// the transaction, so a crash leaves the old indexes in place.
	rebuild := false
	if len(chunks) >= bulkChunks {
		var existing int
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM chunks").Scan(&existing); err != nil {
			return fmt.Errorf("count chunks: %w", err)
		}
		// Only when the load at least doubles the table: rebuilding
		// the index of a large table for a modest addition costs more than
		// it saves, and the drop locks the table for the transaction.
		rebuild = len(chunks) >= existing
	}
	loadStart := time.Now()
	var rebuilt []string // CREATE INDEX statements of the dropped indexes
	if rebuild {
		if rebuilt, err = dropSecondaryIndexes(ctx, tx); err != nil {
			return err
		}
	}
	columns := []string{"document_id", "agent", "user_id", "path", "start_line", "end_line", "text", "hash", "tsv", "tokens"}
	if enabled {
		columns = append(columns, "embedding")
	}
	_, err = tx.CopyFrom(ctx, pgx.Identifier{"chunks"}, columns, pgx.CopyFromSlice(len(chunks), func(i int) ([]any, error) {
		c := chunks[i]
		tsv, tokens := TextVector(&s.terms, memory.IndexText(c))
		delta.add(tsv, tokens, 1)
		row := []any{ids[docKey{c.User, c.Path}], agent, c.User, c.Path, c.StartLine, c.EndLine, c.Text, c.Hash, tsv, tokens}
		if enabled {
			if vectors[i] != nil {
				row = append(row, pgvector.NewVector(vectors[i]))
			} else {
				row = append(row, nil)
			}
		}
		return row, nil
	}))
	if err != nil {
		return fmt.Errorf("copy chunks: %w", err)
	}
	if rebuild {
		copied := time.Since(loadStart)
		buildStart := time.Now()
		defer func() {
			s.log.Info("bulk load", "agent", agent, "chunks", len(chunks), "copy", copied, "index_build", time.Since(buildStart))
		}()
		stmts := []string{
			"SET LOCAL maintenance_work_mem = '1GB'",
			"SET LOCAL max_parallel_maintenance_workers = 2",
		}
		for _, q := range rebuilt {
			if strings.Contains(q, "chunks_embedding_hnsw") {
				*deferred = append(*deferred, q) // after the commit
			} else {
				stmts = append(stmts, q)
			}
		}
		if enabled && len(*deferred) == 0 {
			*deferred = append(*deferred, hnswIndex)
		}
		for _, q := range stmts {
			if _, err := tx.Exec(ctx, q); err != nil {
				return fmt.Errorf("rebuild indexes after bulk load: %s: %w", q, err)
			}
		}
	}
	return nil
}

// termDelta is what an Index call changes in an agent's term
// statistics: chunks and tokens added (negative: removed) and, per term,
// chunks holding it.
type termDelta struct {
	chunks, tokens int64
	df             map[string]int
}

// add counts one chunk's terms (sign 1) or discounts them (sign −1).
func (d *termDelta) add(tsv pgtype.TSVector, tokens, sign int) {
	d.chunks += int64(sign)
	d.tokens += int64(sign * tokens)
	for _, l := range tsv.Lexemes {
		d.df[l.Word] += sign
	}
}

// subtract discounts the chunks of the documents about to be deleted.
func (d *termDelta) subtract(ctx context.Context, tx pgx.Tx, docs []int64) error {
	rows, err := tx.Query(ctx, "SELECT tsv, tokens FROM chunks WHERE document_id = ANY($1)", docs)
	if err != nil {
		return fmt.Errorf("read term statistics of removed chunks: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var tsv pgtype.TSVector
		var tokens int
		if err := rows.Scan(&tsv, &tokens); err != nil {
			return fmt.Errorf("read term statistics of removed chunks: %w", err)
		}
		d.add(tsv, tokens, -1)
	}
	return rows.Err()
}

// apply writes the delta to the agent's statistics, dropping terms no
// chunk holds any more.
func (d *termDelta) apply(ctx context.Context, tx pgx.Tx, agent string) error {
	terms := make([]string, 0, len(d.df))
	counts := make([]int32, 0, len(d.df))
	var gone []string
	for t, n := range d.df {
		if n != 0 {
			terms, counts = append(terms, t), append(counts, int32(n))
		}
		if n < 0 {
			gone = append(gone, t)
		}
	}
	if len(terms) > 0 {
		if _, err := tx.Exec(ctx, `INSERT INTO term_stats (agent, term, df)
			SELECT $1, t, n FROM unnest($2::text[], $3::int[]) AS u(t, n)
			ON CONFLICT (agent, term) DO UPDATE SET df = term_stats.df + excluded.df`, agent, terms, counts); err != nil {
			return fmt.Errorf("update term statistics: %w", err)
		}
	}
	if len(gone) > 0 {
		if _, err := tx.Exec(ctx, "DELETE FROM term_stats WHERE agent = $1 AND term = ANY($2) AND df <= 0", agent, gone); err != nil {
			return fmt.Errorf("update term statistics: %w", err)
		}
	}
	if d.chunks != 0 || d.tokens != 0 {
		if _, err := tx.Exec(ctx, "UPDATE agents SET chunk_count = chunk_count + $2, token_count = token_count + $3 WHERE agent = $1", agent, d.chunks, d.tokens); err != nil {
			return fmt.Errorf("update term statistics: %w", err)
		}
	}
	return nil
}

// dropSecondaryIndexes drops every index of chunks but its primary key,
// inside the bulk load's transaction, and returns the statements that
// create them again: building an index once over the loaded rows is much
// cheaper than maintaining it row by row, and a crash rolls the drop back.
func dropSecondaryIndexes(ctx context.Context, tx pgx.Tx) ([]string, error) {
	rows, err := tx.Query(ctx, `SELECT i.relname, pg_get_indexdef(i.oid)
		FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
		WHERE x.indrelid = 'chunks'::regclass AND NOT x.indisprimary AND NOT x.indisunique
		ORDER BY i.relname`)
	if err != nil {
		return nil, fmt.Errorf("list chunk indexes for bulk load: %w", err)
	}
	var names, defs []string
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			return nil, fmt.Errorf("list chunk indexes for bulk load: %w", err)
		}
		names, defs = append(names, name), append(defs, def)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list chunk indexes for bulk load: %w", err)
	}
	for _, name := range names {
		if _, err := tx.Exec(ctx, "DROP INDEX "+pgx.Identifier{name}.Sanitize()); err != nil {
			return nil, fmt.Errorf("drop index %s for bulk load: %w", name, err)
		}
	}
	return defs, nil
}

// bulkChunks is the size of an insert from which the HNSW index is dropped
// and rebuilt rather than maintained row by row.
var bulkChunks = 10_000

// embedRun is one Index call's embedding state.
type embedRun struct {
	cache memory.Cache
	// err is the embedder's failure in preEmbed: the transaction does not
	// call it again, the chunks wait for Backfill.
	err error
}

// testHookInTransaction, when set by a test, runs inside Index's
// transaction after the old documents are deleted.
var testHookInTransaction func()

// preEmbed embeds, before the transaction, the chunks of the documents
// that differ from what the database holds, so that a slow or failing
// remote embedder never holds the agent's lock. Only database errors are
// returned; the embedder's failure is kept in run.err.
func (s *Store) preEmbed(ctx context.Context, agent, commit string, docs []memory.Document, run *embedRun) error {
	if indexed, err := s.IndexedCommit(ctx, agent); err != nil {
		return err
	} else if commit != "" && indexed == commit {
		return nil
	}
	stored := map[docKey]string{}
	rows, err := s.pool.Query(ctx, "SELECT user_id, path, hash FROM documents WHERE agent = $1", agent)
	if err != nil {
		return fmt.Errorf("read documents: %w", err)
	}
	for rows.Next() {
		var k docKey
		var h string
		if err := rows.Scan(&k.user, &k.path, &h); err != nil {
			return fmt.Errorf("read documents: %w", err)
		}
		stored[k] = h
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read documents: %w", err)
	}
	var texts, hashes []string
	for _, d := range docs {
		if stored[docKey{d.User, d.Path}] == d.Hash {
			continue
		}
		for _, c := range d.Chunks() {
			texts, hashes = append(texts, c.Text), append(hashes, c.Hash)
		}
	}
	if len(texts) == 0 {
		return nil
	}
	if err := loadStoredVectors(ctx, s.pool, s.emb.Model(), &run.cache, hashes); err != nil {
		return err
	}
	if _, err := memory.EmbedCached(ctx, s.emb, &run.cache, texts, hashes); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		run.err = err
	}
	return nil
}

// cachedOnly returns the cached vector of each hash, nil where none.
func cachedOnly(cache *memory.Cache, model string, hashes []string) [][]float32 {
	out := make([][]float32, len(hashes))
	for i, h := range hashes {
		out[i], _ = cache.Lookup(model, h)
	}
	return out
}

// querier is what loadStoredVectors needs of a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// loadStoredVectors fills cache with the vectors the database already
// holds for these chunk hashes (any agent: the column holds one model).
func loadStoredVectors(ctx context.Context, q querier, model string, cache *memory.Cache, hashes []string) error {
	var missing []string
	for _, h := range hashes {
		if _, ok := cache.Lookup(model, h); !ok {
			missing = append(missing, h)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	rows, err := q.Query(ctx, "SELECT DISTINCT ON (hash) hash, embedding FROM chunks WHERE hash = ANY($1) AND embedding IS NOT NULL", missing)
	if err != nil {
		return fmt.Errorf("load stored vectors: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var h string
		var v pgvector.Vector
		if err := rows.Scan(&h, &v); err != nil {
			return fmt.Errorf("load stored vectors: %w", err)
		}
		cache.Store(model, h, v.Slice())
	}
	return rows.Err()
}

// Search implements memory.Store: the agent's term statistics come first
// (one round trip); then, at once on two connections, one statement finds
// the full-text candidates (BM25 from those statistics, as the embedded
// store ranks) with their cosines and the other the vector candidates with
// their BM25 scores; memory.Rank merges them.
func (s *Store) Search(ctx context.Context, agent string, q memory.Query) ([]memory.Hit, error) {
	n := memory.CandidateLimit(q.Limit)
	var qv []float32
	if memory.Enabled(s.emb) {
		vs, err := s.emb.Embed(ctx, []string{q.Text})
		if err != nil || len(vs) != 1 || len(vs[0]) != s.emb.Dimensions() {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			s.log.Warn("query embedding failed; full-text only", "agent", agent, "err", err)
		} else {
			qv = vs[0]
		}
	}
	var terms []string
	for _, t := range s.terms.Query(q.Text) {
		if len(t) <= maxLexeme {
			terms = append(terms, t)
		}
	}
	st, err := s.termStats(ctx, agent, terms)
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", agent, err)
	}
	if st.chunks == 0 {
		return []memory.Hit{}, nil
	}
	// Terms no chunk holds add nothing.
	var known []string
	var df []int
	for i, t := range terms {
		if st.df[i] > 0 {
			known, df = append(known, t), append(df, st.df[i])
		}
	}
	sel := memory.Selecting(df, int(st.chunks))
	var match []string
	for i, t := range known {
		if sel[i] {
			match = append(match, "'"+t+"'")
		}
	}
	if len(match) == 0 && qv == nil {
		return []memory.Hit{}, nil
	}
	// The two sides run at once, on two connections; each scores its
	// candidates on the other side too.
	var statements []searchStatement
	if len(match) > 0 {
		statements = append(statements, textSQL(agent, q.User, known, df, st, strings.Join(match, " | "), qv, n))
	}
	if qv != nil {
		statements = append(statements, vectorSQL(agent, q.User, known, df, st, qv, n, exactVectors(st.chunks)))
	}
	results := make([][]memory.Candidate, len(statements))
	errs := make([]error, len(statements))
	var wg sync.WaitGroup
	for i, stmt := range statements {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = s.candidates(ctx, stmt)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("search %s: %w", agent, err)
	}
	return memory.Rank(slices.Concat(results...), q.RankOptions(qv != nil)), nil
}

// searchStatement is one side's query.
type searchStatement struct {
	sql  string
	args []any
}

// candidates runs a side's query: rows of a chunk and its two scores.
func (s *Store) candidates(ctx context.Context, stmt searchStatement) ([]memory.Candidate, error) {
	rows, err := s.pool.Query(ctx, stmt.sql, stmt.args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []memory.Candidate
	for rows.Next() {
		var c memory.Candidate
		if err := rows.Scan(&c.User, &c.Path, &c.StartLine, &c.EndLine, &c.Text, &c.Hash, &c.TextScore, &c.VectorScore); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// exactVectors reports whether an agent of n chunks gets an exact vector
// scan, as the embedded store does, rather than the approximate HNSW
// index: below exactVectorChunks the scan is cheap and both stores then
// find the same vector candidates.
func exactVectors(n int64) bool { return n <= exactVectorChunks }

const exactVectorChunks = 10_000

// agentStats is what BM25 needs of an agent: its chunks, their tokens,
// and the document frequency of each query term (0 when none holds it).
type agentStats struct {
	chunks, tokens int64
	df             []int
}

func (s *Store) termStats(ctx context.Context, agent string, terms []string) (agentStats, error) {
	st := agentStats{df: make([]int, len(terms))}
	var batch pgx.Batch
	batch.Queue("SELECT chunk_count, token_count FROM agents WHERE agent = $1", agent).QueryRow(func(row pgx.Row) error {
		err := row.Scan(&st.chunks, &st.tokens)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
	if len(terms) > 0 {
		batch.Queue("SELECT term, df FROM term_stats WHERE agent = $1 AND term = ANY($2)", agent, terms).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var t string
				var df int
				if err := rows.Scan(&t, &df); err != nil {
					return err
				}
				if i := slices.Index(terms, t); i >= 0 {
					st.df[i] = df
				}
			}
			return rows.Err()
		})
	}
	if err := s.pool.SendBatch(ctx, &batch).Close(); err != nil {
		return st, fmt.Errorf("term statistics: %w", err)
	}
	return st, nil
}

// bm25SQL returns the lateral join that scores chunk c (columns x.tf0 …,
// x.norm) and the BM25 expression over it, with its arguments appended
// through arg. BM25 is computed as memory/bm25 computes it, term by term
// in the same order with the same float64 operations: tf is ts_rank_cd of
// the term alone with unit weights, which counts the term's positions in
// the chunk's tokens (read from one decompressed copy of them).
func bm25SQL(terms []string, df []int, st agentStats, arg func(any) string) (lateral, score string) {
	if len(terms) == 0 {
		return "", "0::float8"
	}
	avgdl := bm25.AvgDocLen(st.tokens, int(st.chunks))
	var tfs, parts []string
	for i, t := range terms {
		q := arg("'" + t + "'")
		tfs = append(tfs, fmt.Sprintf("CASE WHEN d.tsv @@ %s::tsquery THEN ts_rank_cd('{1,1,1,1}', d.tsv, %s::tsquery)::float8 ELSE 0::float8 END AS tf%d", q, q, i))
		parts = append(parts, fmt.Sprintf("%s::float8 * x.tf%d * %s::float8 / (x.tf%d + x.norm)", arg(bm25.IDF(int(st.chunks), df[i])), i, arg(bm25.K1+1), i))
	}
	norm := fmt.Sprintf("%s::float8 * (%s::float8 + %s::float8 * c.tokens / %s::float8) AS norm", arg(float64(bm25.K1)), arg(1-bm25.B), arg(float64(bm25.B)), arg(avgdl))
	// OFFSET 0 keeps the subqueries from being flattened, which would
	// call ts_rank_cd (and decompress the tokens) once per use.
	lateral = " CROSS JOIN LATERAL (SELECT " + strings.Join(tfs, ", ") + ", " + norm +
		" FROM (SELECT c.tsv || ''::tsvector AS tsv OFFSET 0) AS d OFFSET 0) AS x"
	return lateral, "(0::float8 + " + strings.Join(parts, " + ") + ")"
}

const (
	searchScope   = "c.agent = $1 AND (c.user_id = '' OR c.user_id = $2)"
	searchColumns = "c.user_id, c.path, c.start_line, c.end_line, c.text, c.hash, "
	// The embedded store's order of ties: user, path, line, bytewise.
	tieOrder = `c.user_id COLLATE "C", c.path COLLATE "C", c.start_line`
)

// textSQL is the full-text side: the n chunks holding a selecting term
// (match) with the best BM25, each with its cosine similarity to qv (0
// without qv).
func textSQL(agent, user string, terms []string, df []int, st agentStats, match string, qv []float32, n int) searchStatement {
	args := []any{agent, user, n}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	lateral, score := bm25SQL(terms, df, st, arg)
	cosine := "0::float8"
	if qv != nil {
		cosine = "coalesce(1 - (c.embedding <=> " + arg(pgvector.NewVector(qv)) + "), 0)"
	}
	sql := "SELECT " + searchColumns + "t.score, " + cosine + " FROM (SELECT c.id, " + score + " AS score FROM chunks c" + lateral +
		" WHERE " + searchScope + " AND c.tsv @@ " + arg(match) + "::tsquery ORDER BY 2 DESC, " + tieOrder + " LIMIT $3) AS t JOIN chunks c ON c.id = t.id"
	return searchStatement{sql, args}
}

// vectorSQL is the vector side: the n chunks nearest qv (by the HNSW
// index, or an exact scan when exact), each with its BM25 score.
func vectorSQL(agent, user string, terms []string, df []int, st agentStats, qv []float32, n int, exact bool) searchStatement {
	args := []any{agent, user, n}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	v := arg(pgvector.NewVector(qv))
	order := "c.embedding <=> " + v
	if exact {
		// Not the indexed operator form: an exact scan.
		order = "(1 - (c.embedding <=> " + v + ")) DESC, " + tieOrder
	}
	lateral, score := bm25SQL(terms, df, st, arg)
	sql := "SELECT " + searchColumns + score + ", 1 - (c.embedding <=> " + v + ") FROM (SELECT c.id FROM chunks c WHERE " + searchScope +
		" AND c.embedding IS NOT NULL ORDER BY " + order + " LIMIT $3) AS v JOIN chunks c ON c.id = v.id" + lateral
	return searchStatement{sql, args}
}

// TextVector is the tsvector stored with a chunk, from its indexed text
// (memory.IndexText): its full-text terms (a's terms, those of queries
// and of the embedded store) with their positions, and the number of
// terms (the chunk's BM25 length). Terms PostgreSQL cannot hold (over
// 2,047 bytes) are left out, as to_tsvector leaves them out; positions
// past 16,383 count as 16,383 and a term keeps its first 256, as in
// to_tsvector.
func TextVector(a *memory.Analyzer, text string) (pgtype.TSVector, int) {
	const (
		maxPosition  = 1<<14 - 1
		maxPositions = 256
	)
	at := map[string]int{} // term → index in lexemes
	var lexemes []pgtype.TSVectorLexeme
	i := 0
	a.Each(text, nil, func(tok []byte) {
		i++
		if len(tok) > maxLexeme {
			return
		}
		pos := uint16(min(i, maxPosition))
		j, ok := at[string(tok)]
		if !ok {
			j = len(lexemes)
			word := string(tok)
			at[word] = j
			lexemes = append(lexemes, pgtype.TSVectorLexeme{Word: word})
		}
		ps := lexemes[j].Positions
		if len(ps) < maxPositions && (len(ps) == 0 || ps[len(ps)-1].Position < pos) {
			lexemes[j].Positions = append(ps, pgtype.TSVectorPosition{Position: pos})
		}
	})
	return pgtype.TSVector{Lexemes: lexemes, Valid: true}, i
}

// maxLexeme is the longest token, in bytes, PostgreSQL's full-text types
// hold; longer ones are neither stored nor searched.
const maxLexeme = 2047

// IndexedCommit implements memory.Store.
func (s *Store) IndexedCommit(ctx context.Context, agent string) (string, error) {
	var c string
	err := s.pool.QueryRow(ctx, "SELECT indexed_commit FROM agents WHERE agent = $1", agent).Scan(&c)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("indexed commit of %s: %w", agent, err)
	}
	return c, nil
}

// Chunks implements memory.Store.
func (s *Store) Chunks(ctx context.Context, agent string) ([]memory.Chunk, error) {
	rows, err := s.pool.Query(ctx, "SELECT user_id, path, start_line, end_line, text, hash FROM chunks WHERE agent = $1 ORDER BY user_id, path, start_line", agent)
	if err != nil {
		return nil, fmt.Errorf("chunks of %s: %w", agent, err)
	}
	out := []memory.Chunk{}
	for rows.Next() {
		var c memory.Chunk
		if err := rows.Scan(&c.User, &c.Path, &c.StartLine, &c.EndLine, &c.Text, &c.Hash); err != nil {
			return nil, fmt.Errorf("chunks of %s: %w", agent, err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// backfillBatch is how many chunks Backfill embeds per round.
const backfillBatch = 512

// Backfill implements memory.Store: it embeds chunks without a vector in
// rounds of backfillBatch, each round committed on its own.
func (s *Store) Backfill(ctx context.Context) (int, error) {
	if !memory.Enabled(s.emb) {
		return 0, nil
	}
	done := 0
	var after int64
	for {
		rows, err := s.pool.Query(ctx, "SELECT id, text, hash FROM chunks WHERE embedding IS NULL AND id > $1 ORDER BY id LIMIT $2", after, backfillBatch)
		if err != nil {
			return done, fmt.Errorf("backfill: %w", err)
		}
		var ids []int64
		var texts, hashes []string
		for rows.Next() {
			var id int64
			var text, hash string
			if err := rows.Scan(&id, &text, &hash); err != nil {
				return done, fmt.Errorf("backfill: %w", err)
			}
			ids, texts, hashes = append(ids, id), append(texts, text), append(hashes, hash)
		}
		if err := rows.Err(); err != nil {
			return done, fmt.Errorf("backfill: %w", err)
		}
		if len(ids) == 0 {
			return done, nil
		}
		after = ids[len(ids)-1]
		var cache memory.Cache
		vectors, err := memory.EmbedCached(ctx, s.emb, &cache, texts, hashes)
		if err != nil {
			return done, fmt.Errorf("backfill: %w", err)
		}
		vs := make([]pgvector.Vector, len(vectors))
		for i, v := range vectors {
			vs[i] = pgvector.NewVector(v)
		}
		tag, err := s.pool.Exec(ctx, `UPDATE chunks AS c SET embedding = u.e
			FROM unnest($1::bigint[], $2::vector[]) AS u(id, e)
			WHERE c.id = u.id AND c.embedding IS NULL`, ids, vs)
		if err != nil {
			return done, fmt.Errorf("backfill: %w", err)
		}
		done += int(tag.RowsAffected())
	}
}
