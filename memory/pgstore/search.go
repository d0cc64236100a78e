package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/pgvector/pgvector-go"

	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/bm25"
)

// Search implements memory.Store: the agent's term statistics come first
// (one round trip); then, at once on two connections, one statement finds
// the full-text candidates (BM25 from those statistics, as the embedded
// store ranks) with their cosines and the other the vector candidates with
// their BM25 scores; memory.Rank merges them.
func (s *Store) Search(ctx context.Context, agent string, q memory.Query) ([]memory.Hit, error) {
	n := memory.CandidateLimit(q.Limit)
	qv, err := s.queryVector(ctx, agent, q.Text)
	if err != nil {
		return nil, err
	}
	terms := s.queryTerms(q)
	st, err := s.termStats(ctx, agent, terms)
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", agent, err)
	}
	if st.chunks == 0 {
		return []memory.Hit{}, nil
	}
	known, df, match := selectTerms(terms, st)
	if len(match) == 0 && qv == nil {
		return []memory.Hit{}, nil
	}
	// The two sides run at once, on two connections; each scores its
	// candidates on the other side too.
	var statements []searchStatement
	if len(match) > 0 {
		statements = append(statements, textSQL(agent, q.User, known, df, st, strings.Join(match, " | "), qv, n))
	}
	if qv != nil {
		statements = append(statements, vectorSQL(agent, q.User, known, df, st, qv, n, exactVectors(st.chunks)))
	}
	found, err := s.sides(ctx, statements)
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

// selectTerms keeps the terms some chunk holds (known) with their
// document frequencies (df), and returns as match the quoted terms that
// select full-text candidates (memory.Selecting).
func selectTerms(terms []string, st agentStats) (known []string, df []int, match []string) {
	// Terms no chunk holds add nothing.
	for i, t := range terms {
		if st.df[i] > 0 {
			known, df = append(known, t), append(df, st.df[i])
		}
	}
	sel := memory.Selecting(df, int(st.chunks))
	for i, t := range known {
		if sel[i] {
			match = append(match, "'"+t+"'")
		}
	}
	return known, df, match
}

// sides runs the statements at once, each on a connection of its own,
// and returns their candidates together.
func (s *Store) sides(ctx context.Context, statements []searchStatement) ([]memory.Candidate, error) {
	results := make([][]memory.Candidate, len(statements))
	errs := make([]error, len(statements))
	var wg sync.WaitGroup
	for i, stmt := range statements {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = s.candidates(ctx, stmt)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return slices.Concat(results...), nil
}

// searchStatement is one side's query.
type searchStatement struct {
	sql  string
	args []any
}

// candidates runs a side's query: rows of a chunk and its two scores.
func (s *Store) candidates(ctx context.Context, stmt searchStatement) ([]memory.Candidate, error) {
	rows, err := s.pool.Query(ctx, stmt.sql, stmt.args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []memory.Candidate
	for rows.Next() {
		var c memory.Candidate
		if err := rows.Scan(&c.User, &c.Path, &c.StartLine, &c.EndLine, &c.Text, &c.Hash, &c.TextScore, &c.VectorScore); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// exactVectors reports whether an agent of n chunks gets an exact vector
// scan, as the embedded store does, rather than the approximate HNSW
// index: up to memory.ExactVectorChunks the scan is cheap and both
// stores then find the same vector candidates.
func exactVectors(n int64) bool { return n <= memory.ExactVectorChunks }

// bm25SQL returns the lateral join that scores chunk c (columns x.tf0 …,
// x.norm) and the BM25 expression over it, with its arguments appended
// through arg. BM25 is computed as memory/bm25 computes it, term by term
// in the same order with the same float64 operations: tf is ts_rank_cd of
// the term alone with unit weights, which counts the term's positions in
// the chunk's tokens (read from one decompressed copy of them).
func bm25SQL(terms []string, df []int, st agentStats, arg func(any) string) (lateral, score string) {
	if len(terms) == 0 {
		return "", "0::float8"
	}
	avgdl := bm25.AvgDocLen(st.tokens, int(st.chunks))
	var tfs, parts []string
	for i, t := range terms {
		q := arg("'" + t + "'")
		tfs = append(tfs, fmt.Sprintf("CASE WHEN d.tsv @@ %s::tsquery THEN ts_rank_cd('{1,1,1,1}', d.tsv, %s::tsquery)::float8 ELSE 0::float8 END AS tf%d", q, q, i))
		parts = append(parts, fmt.Sprintf("%s::float8 * x.tf%d * %s::float8 / (x.tf%d + x.norm)", arg(bm25.IDF(int(st.chunks), df[i])), i, arg(bm25.K1+1), i))
	}
	norm := fmt.Sprintf("%s::float8 * (%s::float8 + %s::float8 * c.tokens / %s::float8) AS norm", arg(float64(bm25.K1)), arg(1-bm25.B), arg(float64(bm25.B)), arg(avgdl))
	// OFFSET 0 keeps the subqueries from being flattened, which would
	// call ts_rank_cd (and decompress the tokens) once per use.
	lateral = " CROSS JOIN LATERAL (SELECT " + strings.Join(tfs, ", ") + ", " + norm +
		" FROM (SELECT c.tsv || ''::tsvector AS tsv OFFSET 0) AS d OFFSET 0) AS x"
	return lateral, "(0::float8 + " + strings.Join(parts, " + ") + ")"
}

const (
	searchScope   = "c.agent = $1 AND (c.user_id = '' OR c.user_id = $2)"
	searchColumns = "c.user_id, c.path, c.start_line, c.end_line, c.text, c.hash, "
	// The embedded store's order of ties: user, path, line, bytewise.
	tieOrder = `c.user_id COLLATE "C", c.path COLLATE "C", c.start_line`
)

// textSQL is the full-text side: the n chunks holding a selecting term
// (match) with the best BM25, each with its cosine similarity to qv (0
// without qv).
func textSQL(agent, user string, terms []string, df []int, st agentStats, match string, qv []float32, n int) searchStatement {
	args := []any{agent, user, n}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	lateral, score := bm25SQL(terms, df, st, arg)
	cosine := "0::float8"
	if qv != nil {
		cosine = "coalesce(1 - (c.embedding <=> " + arg(pgvector.NewVector(qv)) + "), 0)"
	}
	sql := "SELECT " + searchColumns + "t.score, " + cosine + " FROM (SELECT c.id, " + score + " AS score FROM chunks c" + lateral +
		" WHERE " + searchScope + " AND c.tsv @@ " + arg(match) + "::tsquery ORDER BY 2 DESC, " + tieOrder + " LIMIT $3) AS t JOIN chunks c ON c.id = t.id"
	return searchStatement{sql, args}
}

// vectorSQL is the vector side: the n chunks nearest qv (by the HNSW
// index, or an exact scan when exact), each with its BM25 score.
func vectorSQL(agent, user string, terms []string, df []int, st agentStats, qv []float32, n int, exact bool) searchStatement {
	args := []any{agent, user, n}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	v := arg(pgvector.NewVector(qv))
	order := "c.embedding <=> " + v
	if exact {
		// Not the indexed operator form: an exact scan.
		order = "(1 - (c.embedding <=> " + v + ")) DESC, " + tieOrder
	}
	lateral, score := bm25SQL(terms, df, st, arg)
	sql := "SELECT " + searchColumns + score + ", 1 - (c.embedding <=> " + v + ") FROM (SELECT c.id FROM chunks c WHERE " + searchScope +
		" AND c.embedding IS NOT NULL ORDER BY " + order + " LIMIT $3) AS v JOIN chunks c ON c.id = v.id" + lateral
	return searchStatement{sql, args}
}
