package pgstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/quirehq/quire/memory"
)

// hnswIndex returns the statement that creates the vector index over
// vectors of dims dimensions: an HNSW cosine index of the embeddings cast
// to half precision (halfvec), half the size of one over the full vectors
// and built faster. A search finds its candidates there (halfvecOrder)
// and ranks them by the stored vectors' exact cosine (vectorSide).
func hnswIndex(dims int) string {
	return fmt.Sprintf("CREATE INDEX chunks_embedding_hnsw ON chunks USING hnsw ((embedding::halfvec(%d)) halfvec_cosine_ops)", dims)
}

// halfvecOrder is the ORDER BY expression the vector index serves: the
// cosine distance of the chunk's halfvec to the query's ($4), as
// hnswIndex indexes it. $4 is cast to vector first: a query whose first
// use of it is this cast would take it for a halfvec everywhere, exact
// cosines included.
func halfvecOrder(dims int) string {
	return fmt.Sprintf("(c.embedding::halfvec(%d)) <=> ($4::vector::halfvec(%d))", dims, dims)
}

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
		start := time.Now()
		if err := s.buildConcurrently(s.bgCtx, defs); err != nil {
			if s.bgCtx.Err() == nil {
				s.log.Warn("building the vector index failed; vector search scans exactly until it exists", "err", err)
			}
			return
		}
		if d := time.Since(start); d > time.Second {
			s.log.Info("vector index built", "took", d)
		}
	}()
}

// buildConcurrently runs the CREATE INDEX statements defs (those of the
// HNSW index) with CONCURRENTLY IF NOT EXISTS on a connection of the
// pool, after dropping an invalid HNSW index, with maintenance memory for
// the whole HNSW graph (hnswBuildMemory) that is reset before the
// connection goes back. A valid HNSW index is left as it is, without
// reading the table: an Open at a million chunks would count them all.
func (s *Store) buildConcurrently(ctx context.Context, defs []string) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	// One statement per Exec: CONCURRENTLY cannot run in the implicit
	// transaction of a multi-statement query.
	var valid *bool // nil: no index
	err = conn.QueryRow(ctx, `SELECT (SELECT x.indisvalid FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
		WHERE x.indrelid = 'chunks'::regclass AND i.relname = 'chunks_embedding_hnsw')`).Scan(&valid)
	if err == nil && valid != nil && *valid {
		return nil
	}
	if err == nil && valid != nil {
		_, err = conn.Exec(ctx, "DROP INDEX CONCURRENTLY IF EXISTS chunks_embedding_hnsw")
	}
	var vectors int64
	if err == nil {
		err = conn.QueryRow(ctx, "SELECT count(*) FROM chunks WHERE embedding IS NOT NULL").Scan(&vectors)
	}
	mem := hnswBuildMemory(vectors, s.emb.Dimensions())
	for _, q := range []string{fmt.Sprintf("SET maintenance_work_mem = '%dMB'", mem>>20), "SET max_parallel_maintenance_workers = 2"} {
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
	return err
}

// hnswBuildMemory is the maintenance_work_mem an HNSW build over n
// vectors of dims dimensions is given: enough for the whole graph (the
// half-precision vector and about 1 KiB of neighbour lists and headers
// per element at pgvector's m = 16), at least 1 GiB and at most 8 GiB. A graph that
// outgrows maintenance_work_mem is built on with inserts into the index
// on disk, many times slower: a 1M-chunk build had not finished after 16
// minutes with 1 GiB (issue 29); with the 3 GiB this gives it, 384
// dimensions, it took 5.5 minutes on 2 shared cores (load 4-7).
func hnswBuildMemory(n int64, dims int) int64 {
	const minMem, maxMem = 1 << 30, 8 << 30
	need := n * int64(2*dims+1024) * 5 / 4
	return min(max(need, minMem), maxMem)
}

// WaitIndexBuilds waits for background index builds started so far.
func (s *Store) WaitIndexBuilds() { s.bg.Wait() }

// dropSecondaryIndexes drops every index of chunks and chunk_terms but
// their primary keys,
// inside the bulk load's transaction, and returns the statements that
// create them again: building an index once over the loaded rows is much
// cheaper than maintaining it row by row, and a crash rolls the drop back.
func dropSecondaryIndexes(ctx context.Context, tx pgx.Tx) ([]string, error) {
	rows, err := tx.Query(ctx, `SELECT i.relname, pg_get_indexdef(i.oid)
		FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
		WHERE x.indrelid IN ('chunks'::regclass, 'chunk_terms'::regclass) AND NOT x.indisprimary AND NOT x.indisunique
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

// bulkLoad reports whether inserting n chunks is a bulk load, which
// builds the indexes once afterwards: maintaining them row by row (the
// HNSW index above all) costs much more. The DDL is part of the
// transaction, so a crash leaves the old indexes in place.
func bulkLoad(ctx context.Context, tx pgx.Tx, n int) (bool, error) {
	if n < bulkChunks {
		return false, nil
	}
	var existing int
	if err := tx.QueryRow(ctx, "SELECT count(*) FROM chunks").Scan(&existing); err != nil {
		return false, fmt.Errorf("count chunks: %w", err)
	}
	// Only when the load at least doubles the table: rebuilding
	// the index of a large table for a modest addition costs more than
	// it saves, and the drop locks the table for the transaction.
	return n >= existing, nil
}

// rebuildIndexes creates again, in the bulk load's transaction, the
// indexes dropped before it (rebuilt), except the HNSW index: that one
// is left to w.deferred, to be built after the commit without blocking
// writes. It logs the load's times.
func (s *Store) rebuildIndexes(ctx context.Context, w *indexWrite, rebuilt []string, chunks int, copied time.Duration) error {
	buildStart := time.Now()
	defer func() {
		s.log.Info("bulk load", "agent", w.agent, "chunks", chunks, "copy", copied, "index_build", time.Since(buildStart))
	}()
	stmts := []string{
		"SET LOCAL maintenance_work_mem = '1GB'",
		"SET LOCAL max_parallel_maintenance_workers = 2",
	}
	for _, q := range rebuilt {
		if strings.Contains(q, "chunks_embedding_hnsw") {
			w.deferred = append(w.deferred, q) // after the commit
		} else {
			stmts = append(stmts, q)
		}
	}
	if memory.Enabled(s.emb) && len(w.deferred) == 0 {
		w.deferred = append(w.deferred, hnswIndex(s.emb.Dimensions()))
	}
	for _, q := range stmts {
		if _, err := w.tx.Exec(ctx, q); err != nil {
			return fmt.Errorf("rebuild indexes after bulk load: %s: %w", q, err)
		}
	}
	return nil
}
