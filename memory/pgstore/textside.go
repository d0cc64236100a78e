package pgstore

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/bm25"
)

// bm25Query is a query's BM25 as the embedded store computes it: the
// terms some chunk of the agent holds (their term_stats ids, in query
// order) with their IDF, the agent's mean chunk length, and the ids of
// the terms that select full-text candidates (memory.Selecting).
type bm25Query struct {
	ids       []int32
	idf       []float64
	avgdl     float64
	selecting []int32
}

// newBM25Query keeps the terms some chunk holds: terms no chunk holds add
// nothing.
func newBM25Query(st agentStats) *bm25Query {
	q := &bm25Query{avgdl: bm25.AvgDocLen(st.tokens, int(st.chunks))}
	var df []int
	for i, f := range st.df {
		if f > 0 {
			q.ids, df = append(q.ids, st.ids[i]), append(df, f)
			q.idf = append(q.idf, bm25.IDF(int(st.chunks), f))
		}
	}
	for i, sel := range memory.Selecting(df, int(st.chunks)) {
		if sel {
			q.selecting = append(q.selecting, q.ids[i])
		}
	}
	return q
}

// score is the BM25 score of a chunk of tokens tokens whose chunk_terms.tf
// value is tf: term by term in query order, with memory/bm25's DocNorm
// and Weight, so that both stores' scores are bit for bit the same.
func (q *bm25Query) score(tokens int, tf []byte) float64 {
	norm := bm25.DocNorm(int32(tokens), q.avgdl)
	score := 0.0
	for i, id := range q.ids {
		if n := termCount(tf, id); n != 0 {
			score += bm25.Weight(q.idf[i], int32(n), norm)
		}
	}
	return score
}

// textCandidatesSQL reads the chunk_terms rows holding one of the scoped
// keys $1 (textKeys): the GIN index finds them by those keys alone.
const textCandidatesSQL = "SELECT chunk_id, tokens, tf FROM chunk_terms WHERE scoped && $1::int8[]"

// textKeys returns the chunk_terms.scoped keys of the selecting terms in
// each of the scopes a search sees.
func textKeys(scopes, selecting []int32) []int64 {
	keys := make([]int64, 0, len(scopes)*len(selecting))
	for _, scope := range scopes {
		for _, t := range selecting {
			keys = append(keys, scopedKey(scope, t))
		}
	}
	return keys
}

type scoredChunk struct {
	id    int64
	score float64
}

// textSide returns the n chunks holding a selecting term with the best
// BM25 scores, ties in the embedded store's order (user, path, line,
// bytewise), each with its cosine similarity to qv (0 without qv).
func (s *Store) textSide(ctx context.Context, scopes []int32, bq *bm25Query, qv []float32, n int) ([]memory.Candidate, error) {
	scored, err := s.scoreCandidates(ctx, scopes, bq)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(scored, func(a, b scoredChunk) int { return cmp.Compare(b.score, a.score) })
	// The n best and those tied with the last: ties are broken below,
	// by the chunks' places.
	cut := min(n, len(scored))
	for cut > 0 && cut < len(scored) && scored[cut].score == scored[cut-1].score {
		cut++
	}
	best := scored[:cut]
	cands, err := s.fetchCandidates(ctx, best, qv)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(cands, func(a, b memory.Candidate) int {
		return cmp.Or(cmp.Compare(b.TextScore, a.TextScore), cmp.Compare(a.User, b.User), cmp.Compare(a.Path, b.Path), cmp.Compare(a.StartLine, b.StartLine))
	})
	return cands[:min(n, len(cands))], nil
}

// scoreCandidates reads the candidates' chunk_terms rows and scores
// them, straight from the rows' binary values.
func (s *Store) scoreCandidates(ctx context.Context, scopes []int32, bq *bm25Query) ([]scoredChunk, error) {
	rows, err := s.pool.Query(ctx, textCandidatesSQL, textKeys(scopes, bq.selecting))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	binaryRows := true
	for _, f := range rows.FieldDescriptions() {
		binaryRows = binaryRows && f.Format == pgx.BinaryFormatCode
	}
	var out []scoredChunk
	for rows.Next() {
		var c scoredChunk
		var tokens int32
		var tf []byte
		if v := rows.RawValues(); binaryRows && len(v[0]) == 8 && len(v[1]) == 4 {
			c.id, tokens, tf = int64(binary.BigEndian.Uint64(v[0])), int32(binary.BigEndian.Uint32(v[1])), v[2]
		} else if err := rows.Scan(&c.id, &tokens, &tf); err != nil {
			return nil, err
		}
		c.score = bq.score(int(tokens), tf)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("full-text candidates: %w", err)
	}
	return out, nil
}

// fetchCandidates reads the chunks scored, with their cosine similarity
// to qv.
func (s *Store) fetchCandidates(ctx context.Context, scored []scoredChunk, qv []float32) ([]memory.Candidate, error) {
	if len(scored) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(scored))
	score := make(map[int64]float64, len(scored))
	for i, c := range scored {
		ids[i], score[c.id] = c.id, c.score
	}
	cosine, args := "0::float8", []any{ids}
	if qv != nil {
		cosine, args = "coalesce(1 - (c.embedding <=> $2), 0)", append(args, pgvector.NewVector(qv))
	}
	rows, err := s.pool.Query(ctx, "SELECT "+searchColumns+", "+cosine+" FROM chunks c WHERE c.id = ANY($1)", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []memory.Candidate
	for rows.Next() {
		var c memory.Candidate
		var id int64
		if err := rows.Scan(&id, &c.User, &c.Path, &c.StartLine, &c.EndLine, &c.Text, &c.Hash, &c.VectorScore); err != nil {
			return nil, err
		}
		c.TextScore = score[id]
		out = append(out, c)
	}
	return out, rows.Err()
}
