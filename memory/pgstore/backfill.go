package pgstore

import (
	"context"
	"fmt"

	"github.com/pgvector/pgvector-go"

	"github.com/quirehq/quire/memory"
)

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
				rows.Close()
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
