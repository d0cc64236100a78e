package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/quirehq/quire/memory"
)

// Search implements memory.Store: the agent's term statistics come first
// (one round trip); then, at once on two connections, the full-text side
// reads the chunk_terms rows of the chunks the user sees that hold a
// selecting term, scores them with BM25 as the embedded store does and
// fetches the best, and the vector side finds the nearest chunks with
// their chunk_terms rows, scored the same way; memory.Rank merges them.
func (s *Store) Search(ctx context.Context, agent string, q memory.Query) ([]memory.Hit, error) {
	n := memory.CandidateLimit(q.Limit)
	qv, err := s.queryVector(ctx, agent, q.Text)
	if err != nil {
		return nil, err
	}
	terms := s.queryTerms(q)
	st, err := s.termStats(ctx, agent, q.User, terms)
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", agent, err)
	}
	if st.chunks == 0 || len(st.scopes) == 0 {
		return []memory.Hit{}, nil
	}
	bq := newBM25Query(st)
	if len(bq.selecting) == 0 && qv == nil {
		return []memory.Hit{}, nil
	}
	// The two sides run at once, on two connections; each scores its
	// candidates on the other side too.
	var sides []func() ([]memory.Candidate, error)
	if len(bq.selecting) > 0 {
		sides = append(sides, func() ([]memory.Candidate, error) { return s.textSide(ctx, st.scopes, bq, qv, n) })
	}
	if qv != nil {
		sides = append(sides, func() ([]memory.Candidate, error) {
			return s.vectorSide(ctx, agent, q.User, bq, qv, n, exactVectors(st.chunks))
		})
	}
	found, err := both(sides)
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", agent, err)
	}
	hits := memory.Rank(found, q.RankOptions(qv != nil))
	if err := s.addContext(ctx, agent, hits, q.ContextSize()); err != nil {
		return nil, fmt.Errorf("search %s: context: %w", agent, err)
	}
	return hits, nil
}

// contextSQL returns, for hits given as arrays of user, path and start
// line ($2..$4), up to $5 chunks of the hit's document on each side, in
// the hit's order ($1 is the agent).
const contextSQL = `SELECT h.i, c.side, c.start_line, c.end_line, c.text
FROM unnest($2::text[], $3::text[], $4::int[]) WITH ORDINALITY AS h(u, p, s, i)
JOIN documents d ON d.agent = $1 AND d.user_id = h.u AND d.path = h.p
CROSS JOIN LATERAL (
  (SELECT 'before' AS side, start_line, end_line, text FROM chunks WHERE document_id = d.id AND start_line < h.s ORDER BY start_line DESC LIMIT $5)
  UNION ALL
  (SELECT 'after', start_line, end_line, text FROM chunks WHERE document_id = d.id AND start_line > h.s ORDER BY start_line LIMIT $5)
) AS c
ORDER BY h.i, c.start_line`

// addContext gives each hit its n neighbouring chunks on each side, in
// one round trip.
func (s *Store) addContext(ctx context.Context, agent string, hits []memory.Hit, n int) error {
	if n == 0 || len(hits) == 0 {
		return nil
	}
	users, paths, lines := make([]string, len(hits)), make([]string, len(hits)), make([]int32, len(hits))
	for i, h := range hits {
		users[i], paths[i], lines[i] = h.User, h.Path, int32(h.StartLine)
	}
	rows, err := s.pool.Query(ctx, contextSQL, agent, users, paths, lines, n)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var i int64
		var c memory.Context
		if err := rows.Scan(&i, &c.Side, &c.StartLine, &c.EndLine, &c.Text); err != nil {
			return err
		}
		hits[i-1].Context = append(hits[i-1].Context, c)
	}
	return rows.Err()
}

// queryVector embeds the query, or returns nil when the embedder is
// disabled or fails (the search is then full-text only). Only the
// context's end is an error.
func (s *Store) queryVector(ctx context.Context, agent, text string) ([]float32, error) {
	if !memory.Enabled(s.emb) {
		return nil, nil
	}
	vs, err := s.emb.Embed(ctx, []string{text})
	if err != nil || len(vs) != 1 || len(vs[0]) != s.emb.Dimensions() {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		s.log.Warn("query embedding failed; full-text only", "agent", agent, "err", err)
		return nil, nil
	}
	return vs[0], nil
}

// queryTerms returns the query's full-text terms (memory.QueryTerms)
// that PostgreSQL can hold.
func (s *Store) queryTerms(q memory.Query) []string {
	var terms []string
	for _, t := range memory.QueryTerms(&s.terms, q) {
		if len(t) <= maxLexeme {
			terms = append(terms, t)
		}
	}
	return terms
}

// both runs the sides at once and returns their candidates together.
func both(sides []func() ([]memory.Candidate, error)) ([]memory.Candidate, error) {
	results := make([][]memory.Candidate, len(sides))
	errs := make([]error, len(sides))
	var wg sync.WaitGroup
	for i, side := range sides {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = side()
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return slices.Concat(results...), nil
}

// exactVectors reports whether an agent of n chunks gets an exact vector
// scan, as the embedded store does, rather than the approximate vector
// index: up to memory.ExactVectorChunks the scan is cheap and both
// stores then find the same vector candidates.
func exactVectors(n int64) bool { return n <= exactVectorChunks }

// exactVectorChunks is memory.ExactVectorChunks; tests lower it to reach
// the index with few chunks.
var exactVectorChunks int64 = memory.ExactVectorChunks

const (
	searchScope   = "c.agent = $1 AND (c.user_id = '' OR c.user_id = $2)"
	searchColumns = "c.id, c.user_id, c.path, c.start_line, c.end_line, c.text, c.hash"
)

// vectorRank is the vector side's order: the exact cosine similarity to
// the query ($4), ties in the embedded store's order.
const vectorRank = `(1 - (c.embedding <=> $4)) DESC, c.user_id COLLATE "C", c.path COLLATE "C", c.start_line`

// vectorSQL is the vector side's query for vectors of dims dimensions:
// the $5 nearest chunks the user ($2) sees of the agent ($1) by the
// halfvec IVFFlat index (halfvecOrder), or, when exact, by an exact scan (the
// exact order is no indexed expression), then the best $3 of them by
// vectorRank, with their chunk_terms rows.
func vectorSQL(dims int, exact bool) string {
	order := halfvecOrder(dims)
	if exact {
		order = vectorRank
	}
	return "SELECT " + searchColumns + ", 1 - (c.embedding <=> $4), t.tokens, t.tf FROM (SELECT c.id FROM chunks c WHERE " + searchScope +
		" AND c.embedding IS NOT NULL ORDER BY " + order + " LIMIT $5) AS v JOIN chunks c ON c.id = v.id LEFT JOIN chunk_terms t ON t.chunk_id = c.id ORDER BY " + vectorRank + " LIMIT $3"
}

// vectorCandidates is how many chunks the vector side takes to return n:
// rerankFactor × n from the index, n from an exact scan.
func vectorCandidates(n int, exact bool) int {
	if exact {
		return n
	}
	return rerankFactor * n
}

// rerankFactor is how many more candidates than it returns the vector
// side takes from the index of half-precision vectors, to rank them
// by their exact cosine.
const rerankFactor = 2

// vectorSide returns the n chunks nearest qv by exact cosine similarity
// among the candidates vectorSQL finds, each with its BM25 score. The
// index's probes are set first, in the same round trip (probesCache).
func (s *Store) vectorSide(ctx context.Context, agent, user string, bq *bm25Query, qv []float32, n int, exact bool) ([]memory.Candidate, error) {
	batch := &pgx.Batch{}
	probesSQL, probesArgs, fromCatalog := s.probes.statement()
	if !exact {
		batch.Queue(probesSQL, probesArgs...)
	}
	batch.Queue(vectorSQL(len(qv), exact), agent, user, n, pgvector.NewVector(qv), vectorCandidates(n, exact))
	br := s.pool.SendBatch(ctx, batch)
	defer br.Close()
	if !exact {
		var probes string
		if err := br.QueryRow().Scan(&probes); err != nil {
			return nil, fmt.Errorf("set ivfflat.probes: %w", err)
		}
		if fromCatalog {
			s.probes.store(probes)
		}
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []memory.Candidate
	for rows.Next() {
		var c memory.Candidate
		var id int64
		var tokens *int32
		var tf []byte
		if err := rows.Scan(&id, &c.User, &c.Path, &c.StartLine, &c.EndLine, &c.Text, &c.Hash, &c.VectorScore, &tokens, &tf); err != nil {
			return nil, err
		}
		if tokens != nil {
			c.TextScore = bq.score(int(*tokens), tf)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
