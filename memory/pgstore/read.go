package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/quirehq/quire/memory"
)

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
