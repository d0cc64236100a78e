package pgstore

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/bm25"
)

// TestScoreMatchesBM25: the store's BM25 of a chunk, from its tf value,
// is bit for bit the score memory/bm25 gives it, a term repeated past
// the tsvector's 256 positions included.
func TestScoreMatchesBM25(t *testing.T) {
	var a memory.Analyzer
	texts := []string{
		"Ines prefers tea; the printer on floor 2 is out of toner.",
		"printers printing printed " + strings.Repeat("toner ", 300),
		"tea tea tea and biscuits on the second floor",
		"",
		"the quarterly report mentions the printer twice: printer",
	}
	b := bm25.Builder{Analyzer: a.Each}
	ids := map[string]int32{}
	var tfs [][]byte
	var tokens []int
	var total int64
	for _, text := range texts {
		b.Add(text)
		ct := analyze(&a, text)
		n := ct.tokens
		type entry struct{ id, tf int32 }
		var es []entry
		for i, w := range ct.terms {
			if _, ok := ids[w]; !ok {
				ids[w] = int32(len(ids) + 1)
			}
			es = append(es, entry{ids[w], int32(ct.tf[i])})
		}
		slices.SortFunc(es, func(x, y entry) int { return int(x.id - y.id) })
		var blob []byte
		for _, e := range es {
			blob = binary.BigEndian.AppendUint32(blob, uint32(e.id))
			blob = binary.BigEndian.AppendUint16(blob, uint16(e.tf))
		}
		tfs, tokens, total = append(tfs, blob), append(tokens, n), total+int64(n)
	}
	ix := b.Build()
	for _, query := range []string{"printer toner", "tea floor", "toner", "biscuits report printing"} {
		terms := a.Query(query)
		st := agentStats{chunks: int64(len(texts)), tokens: total, df: make([]int, len(terms)), ids: make([]int32, len(terms))}
		for i, term := range terms {
			st.df[i], st.ids[i] = ix.DF(term), ids[term]
		}
		q := newBM25Query(st)
		for d := range texts {
			if got, want := q.score(tokens[d], tfs[d]), ix.Score(terms, d); got != want {
				t.Errorf("%q, chunk %d: score %v, bm25 %v", query, d, got, want)
			}
		}
	}
}
