package memory

import (
	"context"
	"time"
)

// Query is a memory search.
type Query struct {
	// Text is the natural-language query.
	Text string
	// User scopes the search: "" sees agent-level memory only; a user id
	// sees agent-level memory and that user's own.
	User string
	// Limit is the most hits; 0 means DefaultLimit.
	Limit int
	// MinScore drops weaker hits.
	MinScore float64
	// Fusion chooses the ranking (Weighted by default).
	Fusion Fusion
	// TextWeight is the full-text side's weight in a weighted score
	// (0..1, the vector side getting the rest); nil means
	// DefaultTextWeight.
	TextWeight *float64
	// Context asks for that many neighbouring chunks of the hit's document
	// on each side of every hit (Hit.Context; 0 none, at most
	// MaxContext). It changes what is returned, not the ranking.
	Context int
	// Now is the time the query speaks from: relative dates in Text
	// ("yesterday", "last weekend") count from it. Zero means time.Now().
	Now time.Time
}

// RankOptions returns the ranking options of q; vectors says whether the
// vector side ran.
func (q Query) RankOptions(vectors bool) RankOptions {
	return RankOptions{Limit: q.Limit, MinScore: q.MinScore, Fusion: q.Fusion, TextWeight: q.TextWeight, Vectors: vectors}
}

// IndexStats says what an Index call did.
type IndexStats struct {
	// Documents is the number of documents in the snapshot.
	Documents int
	// Changed counts new or changed documents (re-chunked); Unchanged the
	// ones skipped by hash; Removed those no longer in the snapshot.
	Changed, Unchanged, Removed int
	// Chunks is the number of chunks written.
	Chunks int
	// Embedded counts chunks that got a vector (from the cache or the
	// embedder); Pending those left without one because the embedder
	// failed (EmbedError). Backfill embeds them later.
	Embedded, Pending int
	// EmbedError is the embedder's failure, if any; the text side was
	// indexed regardless.
	EmbedError error
}

// Store keeps the memory chunks of agents searchable. Both the embedded
// index and the PostgreSQL store implement it and pass the conformance
// suite in memory/storetest.
type Store interface {
	// Index makes docs the whole memory of agent as of commit: new and
	// changed documents (by hash) are re-chunked and embedded, unchanged
	// ones are left alone, documents missing from docs are removed, and
	// the agent's indexed commit becomes commit — all or nothing. When
	// commit (not "") is already the indexed commit, nothing is done. An
	// embedder failure does not fail the call: the text is indexed and the
	// vectors are left for Backfill.
	Index(ctx context.Context, agent, commit string, docs []Document) (IndexStats, error)
	// Search runs a hybrid search over agent's memory.
	Search(ctx context.Context, agent string, q Query) ([]Hit, error)
	// IndexedCommit returns the commit of the agent's last completed
	// Index, "" if none.
	IndexedCommit(ctx context.Context, agent string) (string, error)
	// Chunks returns the agent's chunks ordered by user, path and line.
	Chunks(ctx context.Context, agent string) ([]Chunk, error)
	// Backfill embeds chunks that have no vector yet and returns how many
	// it embedded.
	Backfill(ctx context.Context) (int, error)
	// Close releases the store's resources.
	Close() error
}

// ExactVectorChunks is the most chunks an agent may hold for both stores
// to score its vector side by an exact scan; above it each keeps an
// approximate index (the embedded store an inverted file or a sieve by
// dimension, PostgreSQL an IVFFlat index). Up to it both find the same
// vector candidates and rank alike.
const ExactVectorChunks = 10_000
