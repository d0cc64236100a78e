package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/quirehq/quire/memory"
)

// chunkText is a chunk's full-text terms, from its indexed text
// (memory.IndexText): its distinct terms (the tokens of memory.Analyzer,
// those of queries and of the embedded store) in first-seen order, with
// their exact counts (BM25 term frequencies), and the number of tokens
// (the chunk's BM25 length). Terms PostgreSQL's text types could not
// hold (over 2,047 bytes) are left out, as they were when chunks had a
// tsvector, but counted in the length.
type chunkText struct {
	terms  []string
	tf     []int
	tokens int
}

// analyze returns text's chunkText.
func analyze(a *memory.Analyzer, text string) chunkText {
	at := map[string]int{} // term → index in terms
	var ct chunkText
	a.Each(text, nil, func(tok []byte) {
		ct.tokens++
		if len(tok) > maxLexeme {
			return
		}
		j, ok := at[string(tok)]
		if !ok {
			j = len(ct.terms)
			word := string(tok)
			at[word] = j
			ct.terms = append(ct.terms, word)
			ct.tf = append(ct.tf, 0)
		}
		ct.tf[j]++
	})
	return ct
}

// maxLexeme is the longest token, in bytes, PostgreSQL's full-text types
// hold; longer ones are neither stored nor searched.
const maxLexeme = 2047

// termDelta is what an Index call changes in an agent's term
// statistics: chunks and tokens added (negative: removed) and, per term,
// chunks holding it.
type termDelta struct {
	chunks, tokens int64
	df             map[string]int
}

// add counts one chunk's terms, with its scope's term (scopeTerm).
func (d *termDelta) add(user string, ct chunkText) {
	d.chunks++
	d.tokens += int64(ct.tokens)
	d.df[scopeTerm(user)]++
	for _, t := range ct.terms {
		d.df[t]++
	}
}

// subtract discounts the chunks of the documents about to be deleted,
// from their chunk_terms rows (whose terms include their scope's).
func (d *termDelta) subtract(ctx context.Context, tx pgx.Tx, docs []int64) error {
	const removed = "chunks c JOIN chunk_terms t ON t.chunk_id = c.id WHERE c.document_id = ANY($1)"
	var chunks, tokens int64
	if err := tx.QueryRow(ctx, "SELECT count(*), coalesce(sum(t.tokens), 0) FROM "+removed, docs).Scan(&chunks, &tokens); err != nil {
		return fmt.Errorf("read term statistics of removed chunks: %w", err)
	}
	d.chunks, d.tokens = d.chunks-chunks, d.tokens-tokens
	rows, err := tx.Query(ctx, "SELECT s.term, count(*) FROM term_stats s JOIN (SELECT "+termIDSQL+" AS id FROM (SELECT unnest(t.scoped) AS k FROM "+removed+") AS r) AS u ON s.id = u.id GROUP BY s.term", docs)
	if err != nil {
		return fmt.Errorf("read term statistics of removed chunks: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var term string
		var n int
		if err := rows.Scan(&term, &n); err != nil {
			return fmt.Errorf("read term statistics of removed chunks: %w", err)
		}
		d.df[term] -= n
	}
	return rows.Err()
}

// apply writes the delta to the agent's statistics, dropping terms no
// chunk holds any more. A term new to the agent gets the next id; one it
// holds keeps its id (ids are not spent on terms already there).
func (d *termDelta) apply(ctx context.Context, tx pgx.Tx, agent string) error {
	terms := make([]string, 0, len(d.df))
	counts := make([]int32, 0, len(d.df))
	var gone []string
	for t, n := range d.df {
		if n != 0 {
			terms, counts = append(terms, t), append(counts, int32(n))
		}
		if n < 0 {
			gone = append(gone, t)
		}
	}
	if len(terms) > 0 {
		if _, err := tx.Exec(ctx, `UPDATE term_stats AS s SET df = s.df + u.n
			FROM unnest($2::text[], $3::int[]) AS u(t, n) WHERE s.agent = $1 AND s.term = u.t`, agent, terms, counts); err != nil {
			return fmt.Errorf("update term statistics: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO term_stats (agent, term, df)
			SELECT $1, t, n FROM unnest($2::text[], $3::int[]) AS u(t, n)
			WHERE n > 0 AND NOT EXISTS (SELECT 1 FROM term_stats s WHERE s.agent = $1 AND s.term = u.t)`, agent, terms, counts); err != nil {
			return fmt.Errorf("update term statistics: %w", err)
		}
	}
	if len(gone) > 0 {
		if _, err := tx.Exec(ctx, "DELETE FROM term_stats WHERE agent = $1 AND term = ANY($2) AND df <= 0", agent, gone); err != nil {
			return fmt.Errorf("update term statistics: %w", err)
		}
	}
	if d.chunks != 0 || d.tokens != 0 {
		if _, err := tx.Exec(ctx, "UPDATE agents SET chunk_count = chunk_count + $2, token_count = token_count + $3 WHERE agent = $1", agent, d.chunks, d.tokens); err != nil {
			return fmt.Errorf("update term statistics: %w", err)
		}
	}
	return nil
}

// agentStats is what BM25 needs of an agent: its chunks, their tokens,
// and the document frequency and id of each query term (0 when none
// holds it), and the ids of the scopes a search sees (agent-level and
// the user's, scopeTerm), those that hold chunks.
type agentStats struct {
	chunks, tokens int64
	df             []int
	ids            []int32
	scopes         []int32
}

// termStats reads the agent's statistics and the document frequency of
// each term in one round trip, with the ids of the terms and of the
// scopes user sees.
func (s *Store) termStats(ctx context.Context, agent, user string, terms []string) (agentStats, error) {
	st := agentStats{df: make([]int, len(terms)), ids: make([]int32, len(terms))}
	var batch pgx.Batch
	batch.Queue("SELECT chunk_count, token_count FROM agents WHERE agent = $1", agent).QueryRow(func(row pgx.Row) error {
		err := row.Scan(&st.chunks, &st.tokens)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
	scopes := []string{scopeTerm(""), scopeTerm(user)}
	batch.Queue("SELECT term, df, id FROM term_stats WHERE agent = $1 AND (term = ANY($2) OR term = ANY($3))", agent, terms, scopes).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var t string
			var df int
			var id int32
			if err := rows.Scan(&t, &df, &id); err != nil {
				return err
			}
			if i := slices.Index(terms, t); i >= 0 {
				st.df[i], st.ids[i] = df, id
			}
			if slices.Contains(scopes, t) && !slices.Contains(st.scopes, id) {
				st.scopes = append(st.scopes, id)
			}
		}
		return rows.Err()
	})
	if err := s.pool.SendBatch(ctx, &batch).Close(); err != nil {
		return st, fmt.Errorf("term statistics: %w", err)
	}
	return st, nil
}
