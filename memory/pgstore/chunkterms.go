package pgstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/jackc/pgx/v5"
)

// chunk_terms is the full-text index a search reads: per chunk its length
// in tokens, its terms as scoped keys (scopedKey: the term's id,
// term_stats.id, with the chunk's scope's) with a GIN index that finds
// the chunks a user sees holding a query's terms, and tf, its terms' ids
// with their exact counts, from which the store scores BM25 as
// memory/bm25 does. Among its terms is its scope's (scopeTerm).

// scopeTerm is the pseudo-term of a scope: every chunk of user ("" for
// agent-level memory) holds it. No real term contains a space.
func scopeTerm(user string) string { return " scope:" + user }

// scopedKey is a term's key in chunk_terms.scoped for a chunk of scope
// (the id of its scopeTerm): the scope's id in the high 32 bits and the
// term's in the low ones.
func scopedKey(scope, term int32) int64 { return int64(scope)<<32 | int64(uint32(term)) }

// termIDSQL is the term id of a chunk_terms.scoped key k, in SQL.
const termIDSQL = "(k & 4294967295)::int"

// tfEntry is the size of one term of a chunk_terms.tf value: the term's
// id (4 bytes) and its count (2 bytes), big-endian, by id ascending.
const tfEntry = 6

// maxTF is the most a chunk_terms.tf entry counts. A chunk's indexed
// text is at most memory.MaxChunkChars of text with its lead-in and date
// words: no term comes near it.
const maxTF = 1<<16 - 1

// chunkTerms gathers the chunk_terms rows of an Index call while its
// chunks are copied, with the terms by a local number until term_stats
// gives them their ids.
type chunkTerms struct {
	local map[string]int32 // term → local number
	words []string         // by local number
	rows  []pendingTerms
}

type pendingTerms struct {
	chunk  int64
	tokens int
	terms  []int32 // local numbers
	tf     []int
}

// add records chunk id's terms (analyze) with its scope's term.
func (c *chunkTerms) add(id int64, user string, ct chunkText) {
	if c.local == nil {
		c.local = map[string]int32{}
	}
	r := pendingTerms{chunk: id, tokens: ct.tokens, terms: make([]int32, 0, len(ct.terms)+1), tf: make([]int, 0, len(ct.terms)+1)}
	r.terms, r.tf = append(r.terms, c.number(scopeTerm(user))), append(r.tf, 1)
	for i, t := range ct.terms {
		r.terms, r.tf = append(r.terms, c.number(t)), append(r.tf, ct.tf[i])
	}
	c.rows = append(c.rows, r)
}

func (c *chunkTerms) number(term string) int32 {
	n, ok := c.local[term]
	if !ok {
		n = int32(len(c.words))
		c.local[term] = n
		c.words = append(c.words, term)
	}
	return n
}

// copy writes the rows, once term_stats holds every term they use.
func (c *chunkTerms) copy(ctx context.Context, tx pgx.Tx, agent string) error {
	if len(c.rows) == 0 {
		return nil
	}
	ids, err := termIDs(ctx, tx, agent, c.words)
	if err != nil {
		return err
	}
	_, err = tx.CopyFrom(ctx, pgx.Identifier{"chunk_terms"}, []string{"chunk_id", "tokens", "scoped", "tf"}, pgx.CopyFromSlice(len(c.rows), func(i int) ([]any, error) {
		r := c.rows[i]
		terms := make([]int32, len(r.terms))
		order := make([]int, len(r.terms))
		for j, n := range r.terms {
			terms[j], order[j] = ids[n], j
		}
		scope := terms[0] // add puts the scope's term first
		sort.Slice(order, func(a, b int) bool { return terms[order[a]] < terms[order[b]] })
		scoped := make([]int64, len(order))
		tf := make([]byte, 0, tfEntry*len(order))
		for k, j := range order {
			scoped[k] = scopedKey(scope, terms[j])
			tf = binary.BigEndian.AppendUint32(tf, uint32(terms[j]))
			tf = binary.BigEndian.AppendUint16(tf, uint16(min(r.tf[j], maxTF)))
		}
		return []any{r.chunk, r.tokens, scoped, tf}, nil
	}))
	if err != nil {
		return fmt.Errorf("copy chunk terms: %w", err)
	}
	return nil
}

// termIDs returns the term_stats ids of the agent's terms, in their order.
func termIDs(ctx context.Context, tx pgx.Tx, agent string, terms []string) ([]int32, error) {
	rows, err := tx.Query(ctx, "SELECT u.i, s.id FROM unnest($2::text[]) WITH ORDINALITY AS u(t, i) JOIN term_stats s ON s.agent = $1 AND s.term = u.t", agent, terms)
	if err != nil {
		return nil, fmt.Errorf("read term ids: %w", err)
	}
	defer rows.Close()
	ids := make([]int32, len(terms))
	found := 0
	for rows.Next() {
		var i int64
		var id int32
		if err := rows.Scan(&i, &id); err != nil {
			return nil, fmt.Errorf("read term ids: %w", err)
		}
		ids[i-1] = id
		found++
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read term ids: %w", err)
	}
	if found != len(terms) {
		return nil, fmt.Errorf("read term ids: %d of %d terms have none", len(terms)-found, len(terms))
	}
	return ids, nil
}

// termCount returns how often the term of id occurs in a chunk, from its
// chunk_terms.tf value (0 when it holds none).
func termCount(tf []byte, id int32) int {
	n := len(tf) / tfEntry
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		v := int32(binary.BigEndian.Uint32(tf[m*tfEntry:]))
		switch {
		case v < id:
			lo = m + 1
		case v > id:
			hi = m
		default:
			return int(binary.BigEndian.Uint16(tf[m*tfEntry+4:]))
		}
	}
	return 0
}
