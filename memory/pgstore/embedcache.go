package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/quirehq/quire/memory"
)

// embedRun is one Index call's embedding state.
type embedRun struct {
	cache memory.Cache
	// err is the embedder's failure in preEmbed: the transaction does not
	// call it again, the chunks wait for Backfill.
	err error
}

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
	defer rows.Close()
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

// chunkVectors returns the vector of each chunk, nil where there is none:
// stored ones reused, the others from the run's cache or embedded now.
// The embedder's failure is no error: stats records it, and the chunks
// without a vector wait for Backfill.
func (s *Store) chunkVectors(ctx context.Context, w *indexWrite, chunks []memory.Chunk) ([][]float32, error) {
	texts := make([]string, len(chunks))
	hashes := make([]string, len(chunks))
	for i, c := range chunks {
		texts[i], hashes[i] = c.Text, c.Hash
	}
	if err := loadStoredVectors(ctx, w.tx, s.emb.Model(), &w.run.cache, hashes); err != nil {
		return nil, err
	}
	var vectors [][]float32
	var err error
	if w.run.err == nil {
		// Normally every vector is in the cache by now (preEmbed).
		vectors, err = memory.EmbedCached(ctx, s.emb, &w.run.cache, texts, hashes)
	} else {
		vectors, err = cachedOnly(&w.run.cache, s.emb.Model(), hashes), w.run.err
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		w.stats.EmbedError = err
		s.log.Warn("embedder failed; text indexed, vectors pending", "agent", w.agent, "err", err)
	}
	for _, v := range vectors {
		if v == nil {
			w.stats.Pending++
		} else {
			w.stats.Embedded++
		}
	}
	return vectors, nil
}
