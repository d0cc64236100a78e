// Package pgstore is the memory store on PostgreSQL with pgvector: several
// daemons may share one database. It owns the schema (embedded, versioned
// migrations), the documents and chunks tables scoped by agent and user,
// each chunk's full-text terms (analyze: memory.Analyzer's terms, those
// of queries and of the embedded store), the per-agent term
// statistics its BM25 ranking reads (kept in the indexing transaction),
// chunk_terms, the narrow table of each chunk's term ids (keyed by its
// scope) and counts that a full-text search reads through its GIN index
// and scores as memory/bm25 does, and an IVFFlat cosine index of the
// embeddings at half precision (halfvec), whose dimension follows the
// configured embedder, whose lists follow the table's size and whose
// candidates a search ranks by the full vectors' exact cosine.
// It is the only package that imports pgx and pgvector.
package pgstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	pgxvec "github.com/pgvector/pgvector-go/pgx"

	"github.com/quirehq/quire/memory"
)

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

	// Background work: vector index builds (requestVectorIndex).
	bgCtx        context.Context
	bgCancel     context.CancelFunc
	bg           sync.WaitGroup
	indexMu      sync.Mutex  // serialises vector index checks
	indexPending atomic.Bool // a check waits to start
	probes       probesCache // the vector index's ivfflat.probes
}

var _ memory.Store = (*Store)(nil)

// Open connects, applies migrations and matches the vector column to the
// embedder: when the embedder's model or dimension differs from the one
// the stored vectors came from, the vectors and the vector index are
// dropped (the index is built again once there are vectors to index);
// Backfill then re-embeds every chunk.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if opts.Schema == "" {
		opts.Schema = "quire"
	}
	if opts.Embedder == nil {
		opts.Embedder = memory.None{}
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
	if err := prepareSchema(ctx, cfg.ConnConfig.Copy(), opts.Schema); err != nil {
		return nil, err
	}
	cfg.AfterConnect = afterConnect
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	s := &Store{pool: pool, schema: schema, schemaName: opts.Schema, emb: opts.Embedder, log: log.With("component", "pgstore"), older: opts.Older}
	s.bgCtx, s.bgCancel = context.WithCancel(context.Background())
	if err := s.matchEmbedder(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	// A build a crash or Close interrupted leaves no index, or an
	// invalid one: build it again, in the background.
	s.requestVectorIndex()
	return s, nil
}

// afterConnect readies each new connection of the pool: the vector types
// registered and iterative index scans on, which probe further lists
// when those probed hold too few chunks the user sees (ivfflat.probes
// is set by each vector search, from the index's lists).
func afterConnect(ctx context.Context, c *pgx.Conn) error {
	if err := pgxvec.RegisterTypes(ctx, c); err != nil {
		return fmt.Errorf("register vector types: %w", err)
	}
	_, err := c.Exec(ctx, "SET ivfflat.iterative_scan = relaxed_order")
	return err
}

// Close stops background index builds and closes the pool.
func (s *Store) Close() error {
	s.bgCancel()
	s.bg.Wait()
	s.pool.Close()
	return nil
}
