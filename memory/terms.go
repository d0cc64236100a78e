package memory

import (
	"fmt"
	"slices"
	"sync"

	"github.com/kljensen/snowball/english"

	"github.com/quirehq/quire/memory/bm25"
	"github.com/quirehq/quire/workspace"
)

// Analyzer turns memory text into full-text terms, the same for both
// stores: the bm25 tokens (bm25.Tokenize), each reduced to its English
// stem by the Snowball (Porter2) stemmer, so that "hiking", "hikes" and
// "hiked" are one term. Tokens holding a digit are kept as they are.
// Queries also drop English stop words ("what", "did", "the") unless
// nothing else is left. Stems are cached; an Analyzer is safe for
// concurrent use and its zero value is ready.
type Analyzer struct {
	mu    sync.RWMutex
	stems map[string]string // token → stem, at most maxCachedStems
}

// maxCachedStems bounds the stem cache of an Analyzer.
const maxCachedStems = 1 << 20

// Each calls yield with every term of text, in order, growing and
// returning buf as bm25.EachToken does. The slice passed to yield is
// valid only during the call.
func (a *Analyzer) Each(text string, buf []byte, yield func(term []byte)) []byte {
	var term []byte
	return bm25.EachToken(text, buf, func(tok []byte) {
		term = a.appendStem(term[:0], tok)
		yield(term)
	})
}

// Terms returns the terms of text, in order.
func (a *Analyzer) Terms(text string) []string {
	var out []string
	a.Each(text, nil, func(t []byte) { out = append(out, string(t)) })
	return out
}

// Query returns the distinct terms of a query, in order of first
// appearance, without stop words unless the query has nothing else.
func (a *Analyzer) Query(text string) []string {
	var all, kept []string
	bm25.EachToken(text, nil, func(tok []byte) {
		t := string(a.appendStem(nil, tok))
		if slices.Contains(all, t) {
			return
		}
		all = append(all, t)
		if !english.IsStopWord(string(tok)) {
			kept = append(kept, t)
		}
	})
	if len(kept) == 0 {
		return all
	}
	return kept
}

// appendStem appends tok's term to dst: its stem, or tok itself when it
// holds a digit. A cached stem costs no allocation.
func (a *Analyzer) appendStem(dst, tok []byte) []byte {
	for _, c := range tok {
		if '0' <= c && c <= '9' {
			return append(dst, tok...)
		}
	}
	a.mu.RLock()
	s, ok := a.stems[string(tok)]
	a.mu.RUnlock()
	if !ok {
		w := string(tok)
		s = english.Stem(w, true)
		a.mu.Lock()
		if a.stems == nil {
			a.stems = map[string]string{}
		}
		if len(a.stems) < maxCachedStems {
			a.stems[w] = s
		}
		a.mu.Unlock()
	}
	return append(dst, s...)
}

// DateWords is the text a daily log's date adds to each of its chunks'
// indexed text: the ISO date, the weekday, the day, the month's name, the
// year and the day's term (DayTerm): "2023-05-08 Monday 8 May 2023
// 20230508"; "" for any other document.
func DateWords(p string) string {
	d, ok := workspace.LogDate(p)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s %s %d %s %d %s", d.Format("2006-01-02"), d.Weekday(), d.Day(), d.Month(), d.Year(), DayTerm(d))
}

// IndexText is what the full-text side indexes for a chunk: its text,
// and for a daily log's chunk the date words of its file (not part of
// the text a hit returns).
func IndexText(c Chunk) string {
	t := c.Text
	if c.Context != "" {
		t = c.Context + "\n" + t
	}
	if w := DateWords(c.Path); w != "" {
		return w + "\n" + t
	}
	return t
}

// SelectDF is the document frequency above which a query term ranks
// full-text candidates but does not select them, for an agent with n
// chunks: 2 % of the chunks, and never below selectFloor (1,000), so in an
// agent of up to 1,000 chunks every chunk sharing a term with the query
// is ranked, and a term must be held by over 1,000 chunks to be left out
// of the selection.
// Frequent terms barely move a BM25 ranking (their IDF is small), yet
// selecting on them makes a search score a large part of a big agent.
// Both stores apply the rule, so they rank alike.
func SelectDF(n int) int {
	return max(n/50, selectFloor)
}

const selectFloor = 1000

// Selecting returns which of the terms (with document frequencies df, 0
// for terms no chunk holds) select candidates in an agent of n chunks:
// those held by at most SelectDF(n) chunks or, when none is, the rarest
// held one (the first of equals).
func Selecting(df []int, n int) []bool {
	sel := make([]bool, len(df))
	limit := SelectDF(n)
	rarest, any := -1, false
	for i, f := range df {
		if f <= 0 {
			continue
		}
		if f <= limit {
			sel[i], any = true, true
		}
		if rarest < 0 || f < df[rarest] {
			rarest = i
		}
	}
	if !any && rarest >= 0 {
		sel[rarest] = true
	}
	return sel
}
