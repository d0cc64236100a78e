package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
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

// testHookInTransaction, when set by a test, runs inside Index's
// transaction after the old documents are deleted.
var testHookInTransaction func()
