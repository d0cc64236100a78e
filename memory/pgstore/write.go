package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/quirehq/quire/memory"
)

type docRow struct {
	id   int64
	hash string
}

type docKey struct{ user, path string }

// indexWrite is one Index transaction: where it writes and what it
// gathers on the way.
type indexWrite struct {
	tx    pgx.Tx
	agent string
	run   *embedRun
	stats memory.IndexStats
	delta termDelta
	// terms holds the chunk_terms rows of the chunks copied, written
	// once the term statistics give their terms ids.
	terms chunkTerms
	// bulk says the chunks are a bulk load, which began at loaded and
	// dropped the indexes whose CREATE INDEX statements rebuild holds.
	bulk    bool
	rebuild []string
	loaded  time.Time
}

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
	var w *indexWrite
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		w = &indexWrite{tx: tx, agent: agent, run: run, stats: stats, delta: termDelta{df: map[string]int{}}}
		return s.write(ctx, w, commit, docs)
	})
	if w != nil {
		stats = w.stats
	}
	if err != nil {
		return stats, fmt.Errorf("index %s@%s: %w", agent, commit, err)
	}
	s.requestVectorIndex()
	return stats, nil
}

// write is Index's transaction: it claims the agent, replaces the
// documents that changed, updates the term statistics and records the
// commit.
func (s *Store) write(ctx context.Context, w *indexWrite, commit string, docs []memory.Document) error {
	indexed, err := s.claimAgent(ctx, w.tx, w.agent, commit)
	if err != nil {
		return err
	}
	if indexed {
		w.stats.Unchanged = len(docs)
		return nil
	}
	existing, err := storedDocuments(ctx, w.tx, w.agent)
	if err != nil {
		return err
	}
	drop, changed, err := diffDocuments(docs, existing, &w.stats)
	if err != nil {
		return err
	}
	if len(drop) > 0 {
		if err := w.delta.subtract(ctx, w.tx, drop); err != nil {
			return err
		}
		if _, err := w.tx.Exec(ctx, "DELETE FROM documents WHERE id = ANY($1)", drop); err != nil {
			return fmt.Errorf("delete documents: %w", err)
		}
	}
	if testHookInTransaction != nil {
		testHookInTransaction()
	}
	if len(changed) > 0 {
		if err := s.insert(ctx, w, changed); err != nil {
			return err
		}
	}
	if err := w.delta.apply(ctx, w.tx, w.agent); err != nil {
		return err
	}
	if err := w.terms.copy(ctx, w.tx, w.agent); err != nil {
		return err
	}
	if w.bulk {
		if err := s.rebuildIndexes(ctx, w, w.rebuild, len(w.terms.rows), time.Since(w.loaded)); err != nil {
			return err
		}
	}
	_, err = w.tx.Exec(ctx, `INSERT INTO agents (agent, indexed_commit, indexed_at) VALUES ($1, $2, now())
		ON CONFLICT (agent) DO UPDATE SET indexed_commit = excluded.indexed_commit, indexed_at = excluded.indexed_at`, w.agent, commit)
	return err
}

// claimAgent takes the agent's index lock for the transaction and
// registers the agent. It reports whether commit is the indexed commit
// already, and refuses with ErrOlder a commit older than that one.
func (s *Store) claimAgent(ctx context.Context, tx pgx.Tx, agent, commit string) (bool, error) {
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext('quire-index:' || $1 || ':' || $2))", s.schema, agent); err != nil {
		return false, fmt.Errorf("lock: %w", err)
	}
	var indexed string
	err := tx.QueryRow(ctx, "SELECT indexed_commit FROM agents WHERE agent = $1", agent).Scan(&indexed)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return false, err
	}
	if commit != "" && indexed == commit {
		return true, nil
	}
	// Monotonic per agent: never an older commit over a newer one.
	if commit != "" && indexed != "" && s.older != nil && s.older(agent, commit, indexed) {
		return false, fmt.Errorf("%w (%s) than %s", ErrOlder, indexed, commit)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO agents (agent) VALUES ($1) ON CONFLICT DO NOTHING", agent); err != nil {
		return false, fmt.Errorf("register agent: %w", err)
	}
	return false, nil
}

// storedDocuments returns the agent's documents as the database holds them.
func storedDocuments(ctx context.Context, tx pgx.Tx, agent string) (map[docKey]docRow, error) {
	rows, err := tx.Query(ctx, "SELECT id, user_id, path, hash FROM documents WHERE agent = $1", agent)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	existing := map[docKey]docRow{}
	for rows.Next() {
		var k docKey
		var r docRow
		if err := rows.Scan(&r.id, &k.user, &k.path, &r.hash); err != nil {
			return nil, err
		}
		existing[k] = r
	}
	return existing, rows.Err()
}

// diffDocuments compares docs with the stored documents: drop holds the
// stored ones changed or gone, changed the documents to insert; stats
// counts them. A document given twice is an error.
func diffDocuments(docs []memory.Document, existing map[docKey]docRow, stats *memory.IndexStats) (drop []int64, changed []memory.Document, err error) {
	seen := map[docKey]bool{}
	for _, d := range docs {
		k := docKey{d.User, d.Path}
		if seen[k] {
			return nil, nil, fmt.Errorf("document %s of user %q appears twice", d.Path, d.User)
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
	return drop, changed, nil
}

// insert writes changed documents and their chunks (with CopyFrom),
// reusing stored vectors of identical chunks and embedding the rest.
func (s *Store) insert(ctx context.Context, w *indexWrite, docs []memory.Document) error {
	ids, err := insertDocuments(ctx, w.tx, w.agent, docs)
	if err != nil {
		return err
	}
	var chunks []memory.Chunk
	for _, d := range docs {
		chunks = append(chunks, d.Chunks()...)
	}
	w.stats.Chunks = len(chunks)
	var vectors [][]float32
	if memory.Enabled(s.emb) {
		if vectors, err = s.chunkVectors(ctx, w, chunks); err != nil {
			return err
		}
	}
	rebuild, err := bulkLoad(ctx, w.tx, len(chunks))
	if err != nil {
		return err
	}
	w.loaded, w.bulk = time.Now(), rebuild
	if rebuild {
		if w.rebuild, err = dropSecondaryIndexes(ctx, w.tx); err != nil {
			return err
		}
	}
	chunkIDs, err := newChunkIDs(ctx, w.tx, len(chunks))
	if err != nil {
		return err
	}
	return s.copyChunks(ctx, w, chunks, ids, chunkIDs, vectors)
}

// newChunkIDs takes n ids from the chunks' sequence, for chunks and
// chunk_terms rows written by COPY.
func newChunkIDs(ctx context.Context, tx pgx.Tx, n int) ([]int64, error) {
	rows, err := tx.Query(ctx, "SELECT nextval(pg_get_serial_sequence('chunks', 'id')) FROM generate_series(1, $1)", n)
	if err != nil {
		return nil, fmt.Errorf("chunk ids: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("chunk ids: %w", err)
	}
	return ids, nil
}

// insertDocuments inserts the document rows and returns their ids.
func insertDocuments(ctx context.Context, tx pgx.Tx, agent string, docs []memory.Document) (map[docKey]int64, error) {
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
		return nil, fmt.Errorf("insert documents: %w", err)
	}
	defer rows.Close()
	ids := map[docKey]int64{}
	for rows.Next() {
		var id int64
		var k docKey
		if err := rows.Scan(&id, &k.user, &k.path); err != nil {
			return nil, err
		}
		ids[k] = id
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("insert documents: %w", err)
	}
	return ids, nil
}

// copyChunks copies the chunks into the table under the given ids with
// their lengths in tokens and, when the embedder is enabled, their
// vectors (nil: pending), counting their terms into the transaction's term statistics
// and gathering their chunk_terms rows.
func (s *Store) copyChunks(ctx context.Context, w *indexWrite, chunks []memory.Chunk, ids map[docKey]int64, chunkIDs []int64, vectors [][]float32) error {
	enabled := memory.Enabled(s.emb)
	columns := []string{"id", "document_id", "agent", "user_id", "path", "start_line", "end_line", "text", "hash", "tokens"}
	if enabled {
		columns = append(columns, "embedding")
	}
	_, err := w.tx.CopyFrom(ctx, pgx.Identifier{"chunks"}, columns, pgx.CopyFromSlice(len(chunks), func(i int) ([]any, error) {
		c := chunks[i]
		ct := analyze(&s.terms, memory.IndexText(c))
		w.delta.add(c.User, ct)
		w.terms.add(chunkIDs[i], c.User, ct)
		row := []any{chunkIDs[i], ids[docKey{c.User, c.Path}], w.agent, c.User, c.Path, c.StartLine, c.EndLine, c.Text, c.Hash, ct.tokens}
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
	return nil
}

// testHookInTransaction, when set by a test, runs inside Index's
// transaction after the old documents are deleted.
var testHookInTransaction func()
