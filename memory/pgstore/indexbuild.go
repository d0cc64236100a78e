package pgstore

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/quirehq/quire/memory"
)

// The vector index is an IVFFlat cosine index of the embeddings cast to
// half precision (halfvec), named vectorIndexPrefix followed by its
// number of lists. IVFFlat builds in a fraction of HNSW's time and
// memory at a million chunks (issue 29: 3 against 10 minutes on 2 shared
// cores), and its lists follow the table's size: it is built only once
// the table holds minIndexedVectors vectors (below that an exact scan is
// cheap, and exact), and built again under a new name once the table has
// grown rebuildGrowth times past the rows its lists were chosen for.
// A search finds its candidates there (halfvecOrder), probing about
// sqrt(lists)/3 lists (setProbesSQL), and ranks them by the stored
// vectors' exact cosine (vectorSide).
const vectorIndexPrefix = "chunks_embedding_ivf"

// minIndexedVectors is the number of stored vectors from which the
// vector index is built: memory.ExactVectorChunks, below which searches
// scan exactly anyway. Tests lower it.
var minIndexedVectors int64 = memory.ExactVectorChunks

// rebuildGrowth is how many times the rows an index's lists were chosen
// for the table must hold before the index is built again.
const rebuildGrowth = 4

// ivfIndex returns the statement that creates the vector index over
// vectors of dims dimensions with lists lists.
func ivfIndex(dims, lists int) string {
	return fmt.Sprintf("CREATE INDEX %s%d ON chunks USING ivfflat ((embedding::halfvec(%d)) halfvec_cosine_ops) WITH (lists = %d)", vectorIndexPrefix, lists, dims, lists)
}

// ivfLists is the number of lists for an index over n vectors, as
// pgvector advises: n/1000 up to a million vectors, sqrt(n) above.
func ivfLists(n int64) int {
	if n <= 1_000_000 {
		return int(max(n/1000, 1))
	}
	return min(int(math.Sqrt(float64(n))), 32768) // pgvector's maximum
}

// ivfRows is the number of vectors ivfLists chooses lists for.
func ivfRows(lists int) int64 {
	if lists <= 1000 {
		return int64(lists) * 1000
	}
	return int64(lists) * int64(lists)
}

// setProbesSQL sets ivfflat.probes on the connection for the vector
// index there is: a third of the square root of its lists, rounded up
// (1 when there is none), read from the catalog (probesCache keeps it),
// so that it follows an index rebuilt by any daemon sharing the database. At a
// million chunks (1,000 lists, 11 probes) that finds the exact top 10's
// chunks as often as the HNSW index did (recall@10 0.55 both) in less
// time (vector side p50 8.2-9.5 against 11.6-13.4 ms, load 4-5);
// sqrt(lists) probes raised recall@10 to 0.74 at 22 ms.
const setProbesSQL = `SELECT set_config('ivfflat.probes', coalesce((SELECT greatest(ceil(sqrt(max(split_part(o, '=', 2)::int)) / 3), 1)::int
	FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid, unnest(i.reloptions) AS o
	WHERE x.indrelid = 'chunks'::regclass AND x.indisvalid AND i.relname LIKE '` + vectorIndexPrefix + `%' AND o LIKE 'lists=%'), 1)::text, false)`

// halfvecOrder is the ORDER BY expression the vector index serves: the
// cosine distance of the chunk's halfvec to the query's ($4), as
// ivfIndex indexes it. $4 is cast to vector first: a query whose first
// use of it is this cast would take it for a halfvec everywhere, exact
// cosines included.
func halfvecOrder(dims int) string {
	return fmt.Sprintf("(c.embedding::halfvec(%d)) <=> ($4::vector::halfvec(%d))", dims, dims)
}

// requestVectorIndex checks the vector index in the background
// (ensureVectorIndex), after Open and after each write: the chunks are
// searchable at once (an exact vector scan serves until the index
// exists), and the index is built without blocking writes. Checks are
// serialised, and a request made while one waits to start is that one.
func (s *Store) requestVectorIndex() {
	if !memory.Enabled(s.emb) || !s.indexPending.CompareAndSwap(false, true) {
		return
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		s.indexMu.Lock()
		defer s.indexMu.Unlock()
		s.indexPending.Store(false)
		start := time.Now()
		built, err := s.ensureVectorIndex(s.bgCtx)
		s.probes.forget() // the check may have built or dropped an index
		if err != nil {
			if s.bgCtx.Err() == nil {
				s.log.Warn("building the vector index failed; vector search scans exactly until it exists", "err", err)
			}
			return
		}
		if built > 0 {
			s.log.Info("vector index built", "lists", built, "took", time.Since(start))
		}
	}()
}

// vectorIndexState is what the catalog says of the vector indexes and
// the size of chunks, without reading the table.
type vectorIndexState struct {
	valid   []string // names of valid vector indexes
	lists   int      // lists of the valid one of most lists, 0 if none
	kept    string   // name of that one
	invalid []string // left by an interrupted build
	rows    float64  // estimated rows of chunks (reltuples, live tuples), -1 unknown
}

// readVectorIndexState reads vectorIndexState from the catalog.
func readVectorIndexState(ctx context.Context, conn *pgxpool.Conn) (vectorIndexState, error) {
	st := vectorIndexState{rows: -1}
	rows, err := conn.Query(ctx, `SELECT i.relname, x.indisvalid, coalesce((SELECT split_part(o, '=', 2)::int FROM unnest(i.reloptions) AS o WHERE o LIKE 'lists=%'), 100)
		FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
		WHERE x.indrelid = 'chunks'::regclass AND i.relname LIKE $1 || '%'`, vectorIndexPrefix)
	if err != nil {
		return st, err
	}
	for rows.Next() {
		var name string
		var valid bool
		var lists int
		if err := rows.Scan(&name, &valid, &lists); err != nil {
			return st, err
		}
		if valid {
			st.valid = append(st.valid, name)
			if lists > st.lists || (lists == st.lists && name > st.kept) {
				st.lists, st.kept = lists, name
			}
		} else {
			st.invalid = append(st.invalid, name)
		}
	}
	if err := rows.Err(); err != nil {
		return st, err
	}
	err = conn.QueryRow(ctx, `SELECT greatest(c.reltuples, coalesce(pg_stat_get_live_tuples(c.oid), 0)) FROM pg_class c WHERE c.oid = 'chunks'::regclass`).Scan(&st.rows)
	return st, err
}

// ensureVectorIndex drops vector indexes an interrupted build left
// invalid, and valid ones but that of most lists (a rebuild's crash
// before it dropped the index it replaced leaves two), and builds the vector index when the table holds at least
// minIndexedVectors vectors and has none, or has grown rebuildGrowth
// times past the rows of the one it has: with CREATE INDEX CONCURRENTLY
// under a new name, then the old one dropped concurrently. It returns
// the lists of the index it built, 0 if none. A valid index over a table
// that has not grown is left as it is without reading the table (an Open
// at a million chunks would count them all). Several daemons sharing the
// database may race here; IF NOT EXISTS makes the loser's build a no-op.
func (s *Store) ensureVectorIndex(ctx context.Context) (int, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Release()
	st, err := readVectorIndexState(ctx, conn)
	if err != nil {
		return 0, fmt.Errorf("read vector index state: %w", err)
	}
	for _, name := range st.invalid {
		if _, err := conn.Exec(ctx, "DROP INDEX CONCURRENTLY IF EXISTS "+pgx.Identifier{name}.Sanitize()); err != nil {
			return 0, fmt.Errorf("drop invalid vector index: %w", err)
		}
	}
	if err := dropReplaced(ctx, conn, st.valid, st.kept); err != nil {
		return 0, err
	}
	if st.lists > 0 && (st.rows < 0 || st.rows < float64(rebuildGrowth*ivfRows(st.lists))) {
		return 0, nil
	}
	if st.lists == 0 && st.rows >= 0 && st.rows < float64(minIndexedVectors) {
		return 0, nil
	}
	var vectors int64
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM chunks WHERE embedding IS NOT NULL").Scan(&vectors); err != nil {
		return 0, fmt.Errorf("count vectors: %w", err)
	}
	lists := ivfLists(vectors)
	if vectors < max(minIndexedVectors, 1) || (st.lists > 0 && vectors < rebuildGrowth*ivfRows(st.lists)) || lists == st.lists {
		return 0, nil
	}
	if err := buildIndex(ctx, conn, ivfIndex(s.emb.Dimensions(), lists)); err != nil {
		return 0, err
	}
	return lists, dropReplaced(ctx, conn, []string{st.kept}, vectorIndexPrefix+fmt.Sprint(lists))
}

// dropReplaced drops the vector indexes named but kept: those a rebuild
// replaced, left by a crash between the build and the drop, or by a
// rebuild just now.
func dropReplaced(ctx context.Context, conn *pgxpool.Conn, names []string, kept string) error {
	for _, name := range names {
		if name == kept || name == "" {
			continue
		}
		if _, err := conn.Exec(ctx, "DROP INDEX CONCURRENTLY IF EXISTS "+pgx.Identifier{name}.Sanitize()); err != nil {
			return fmt.Errorf("drop the replaced vector index: %w", err)
		}
	}
	return nil
}

// buildIndex runs the CREATE INDEX statement def with CONCURRENTLY IF
// NOT EXISTS on conn, with 1 GiB of maintenance memory (an IVFFlat build
// needs little: its centers and a sample of the vectors) and parallel
// workers, settings reset before the connection goes back.
func buildIndex(ctx context.Context, conn *pgxpool.Conn, def string) error {
	var err error
	// One statement per Exec: CONCURRENTLY cannot run in the implicit
	// transaction of a multi-statement query.
	for _, q := range []string{"SET maintenance_work_mem = '1GB'", "SET max_parallel_maintenance_workers = 2",
		strings.Replace(def, "CREATE INDEX ", "CREATE INDEX CONCURRENTLY IF NOT EXISTS ", 1)} {
		if err == nil {
			_, err = conn.Exec(ctx, q)
		}
	}
	if _, rerr := conn.Exec(context.Background(), "RESET maintenance_work_mem"); rerr != nil {
		conn.Conn().Close(context.Background()) // do not hand the setting on
	} else {
		conn.Exec(context.Background(), "RESET max_parallel_maintenance_workers")
	}
	if err != nil {
		return fmt.Errorf("build vector index: %w", err)
	}
	return nil
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

// bulkChunks is the size of an insert from which the indexes are dropped
// and rebuilt rather than maintained row by row.
var bulkChunks = 10_000

// bulkLoad reports whether inserting n chunks is a bulk load, which
// builds the indexes once afterwards: maintaining them row by row costs
// much more. The DDL is part of the
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
// indexes dropped before it (rebuilt), except the vector index: that one
// is left to the check after the commit (requestVectorIndex), which
// chooses its lists for the table's new size and builds it without
// blocking writes. It logs the load's times.
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
		if !strings.Contains(q, vectorIndexPrefix) {
			stmts = append(stmts, q)
		}
	}
	for _, q := range stmts {
		if _, err := w.tx.Exec(ctx, q); err != nil {
			return fmt.Errorf("rebuild indexes after bulk load: %s: %w", q, err)
		}
	}
	return nil
}
