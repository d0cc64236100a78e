// Package bm25 owns Quire's full-text ranking: the tokenizer of
// behavior.md §5, an immutable Okapi BM25 index with precomputed postings
// (Index: skill search, ≈ 1,000 documents of name + description), and
// one that documents are added to and removed from in place, weighed
// when searched (Dynamic: the embedded memory store, ≈ 100,000 chunks
// changed a few at a time). Both rank alike, to the bit.
//
// # Tokens
//
// Tokenize lower-cases every rune (unicode.ToLower, the simple one-rune
// case mapping), treats every rune that is neither a letter
// (unicode.IsLetter) nor a decimal digit (unicode.IsDigit) as a separator,
// and drops tokens of one character, where a character is one Unicode code
// point: "a", "é" and "7" are dropped, "ab", "日本" and "42" are kept.
// Invalid UTF-8 decodes to U+FFFD, which is a separator. Combining marks are
// not letters, so a decomposed "é" (e + U+0301) splits the word; callers
// that care normalise to NFC first.
//
// # Scoring
//
// For a query q and document d,
//
//	score(q, d) = Σ over distinct terms t of q:  IDF(t) · tf(t,d) · (k1 + 1) / (tf(t,d) + k1 · (1 − b + b · |d| / avgdl))
//	IDF(t)      = ln((N − df(t) + 0.5) / (df(t) + 0.5) + 1)
//
// with k1 = 1.2, b = 0.75, |d| the number of tokens of d and avgdl the mean
// over all N documents. A query word that occurs more than once counts once:
// "pdf pdf markdown" scores exactly like "pdf markdown", so repeating a word
// cannot outweigh the others. Query words absent from the index contribute
// nothing; a document that shares no term with the query is not a hit.
//
// # Cost
//
// Build computes, per term, the posting list of (document, impact) where
// impact = IDF(t) · the tf part above, so a query is a sum of precomputed
// impacts: no per-document maps, no allocation per document. Search keeps
// its accumulators in scratch space pooled per Index, selects the top k with
// a bounded heap, and appends into a caller-supplied slice: with cap(dst) ≥ k
// a query allocates nothing at all once the pool is warm. A Dynamic keeps
// (document, tf) postings and document lengths instead, and weighs the
// postings of the documents a query selects when it runs, with the same
// arithmetic: a change costs what it adds and removes.
//
// Ties (equal scores) are broken by document id, lower first. Builder
// assigns ids in the order documents are added, so callers that add
// documents sorted (skills by slug) get ties in that order; a Dynamic's
// ids are places in the order its caller gives (memory chunks by user,
// path and line).
package bm25

import (
	"math"
	"slices"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Parameters of the ranking function (behavior.md §5).
const (
	K1 = 1.2
	B  = 0.75
)

// Tokenize splits s into index terms as the package documentation
// describes. It returns nil when s has no term.
func Tokenize(s string) []string {
	var out []string
	eachToken(s, nil, func(tok []byte) { out = append(out, string(tok)) })
	return out
}

// EachToken calls yield with each token of s (as Tokenize splits it),
// lower-cased into buf, which it grows as needed and returns for reuse:
// it allocates nothing once buf is large enough. The slice passed to
// yield is valid only during the call.
func EachToken(s string, buf []byte, yield func(tok []byte)) []byte {
	return eachToken(s, buf, yield)
}

// eachToken is EachToken.
func eachToken(s string, buf []byte, yield func(tok []byte)) []byte {
	buf = buf[:0]
	runes := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf { // ASCII fast path
			i++
			switch {
			case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
			case 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
			default:
				if runes > 1 {
					yield(buf)
				}
				buf, runes = buf[:0], 0
				continue
			}
			buf = append(buf, c)
			runes++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
			runes++
			continue
		}
		if runes > 1 {
			yield(buf)
		}
		buf, runes = buf[:0], 0
	}
	if runes > 1 {
		yield(buf)
	}
	return buf
}

// Analyzer splits text into terms like EachToken: it calls yield with
// each term (valid only during the call) and returns buf for reuse.
type Analyzer func(s string, buf []byte, yield func(term []byte)) []byte

// IDF is the inverse document frequency of a term held by df of n
// documents.
func IDF(n, df int) float64 {
	d := float64(df)
	return math.Log((float64(n)-d+0.5)/(d+0.5) + 1)
}

// AvgDocLen is the mean length of n documents of total tokens, as an
// Index computes it.
func AvgDocLen(total int64, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(total) / float64(n)
}

// Builder collects documents for an Index. The zero value is ready to use.
// A Builder is not safe for concurrent use.
type Builder struct {
	// Analyzer splits documents into terms; nil means EachToken. Search
	// splits queries with EachToken: an index built with another analyzer
	// is searched with SearchTerms.
	Analyzer Analyzer
	terms    map[string]int32 // term → term id
	postings [][]rawPosting   // by term id, documents ascending
	docLen   []int32          // by document id
	buf      []byte
	// Scratch for the document being added: its distinct term ids, and per
	// term id the last document that used it and its count there.
	seen    []int32
	lastDoc []int32
	tf      []int32
}

type rawPosting struct {
	doc int32
	tf  int32
}

// Add tokenizes text as one document and returns its id: 0 for the first
// document added, then 1, 2, …. An empty or term-less text is still a
// document (of length zero) so that ids stay dense and predictable.
func (b *Builder) Add(text string) int {
	if b.terms == nil {
		b.terms = make(map[string]int32)
	}
	doc := int32(len(b.docLen))
	b.seen = b.seen[:0]
	n := 0
	each := b.Analyzer
	if each == nil {
		each = eachToken
	}
	b.buf = each(text, b.buf, func(tok []byte) {
		n++
		id, ok := b.terms[string(tok)] // no allocation for the lookup
		if !ok {
			id = int32(len(b.postings))
			b.terms[string(tok)] = id
			b.postings = append(b.postings, nil)
			b.lastDoc = append(b.lastDoc, -1)
			b.tf = append(b.tf, 0)
		}
		if b.lastDoc[id] != doc {
			b.lastDoc[id], b.tf[id] = doc, 0
			b.seen = append(b.seen, id)
		}
		b.tf[id]++
	})
	b.docLen = append(b.docLen, int32(n))
	for _, t := range b.seen {
		b.postings[t] = append(b.postings[t], rawPosting{doc: doc, tf: b.tf[t]})
	}
	return int(doc)
}

// Len returns the number of documents added so far.
func (b *Builder) Len() int { return len(b.docLen) }

// Build returns the immutable Index of the documents added so far. The
// Builder may be reused afterwards; later additions do not affect the
// returned Index.
func (b *Builder) Build() *Index {
	n := len(b.docLen)
	ix := &Index{
		terms:  make(map[string]int32, len(b.terms)),
		start:  make([]int32, len(b.postings)+1),
		idf:    make([]float64, len(b.postings)),
		docLen: slices.Clone(b.docLen),
	}
	var total int64
	for _, l := range b.docLen {
		total += int64(l)
	}
	ix.avgdl = AvgDocLen(total, n)
	postings := 0
	for _, p := range b.postings {
		postings += len(p)
	}
	ix.doc = make([]int32, 0, postings)
	ix.impact = make([]float64, 0, postings)
	for term, id := range b.terms {
		ix.terms[term] = id
	}
	for t, list := range b.postings {
		ix.start[t] = int32(len(ix.doc))
		idf := IDF(n, len(list))
		ix.idf[t] = idf
		for _, p := range list {
			ix.doc = append(ix.doc, p.doc)
			ix.impact = append(ix.impact, Weight(idf, p.tf, DocNorm(b.docLen[p.doc], ix.avgdl)))
		}
	}
	ix.start[len(b.postings)] = int32(len(ix.doc))
	ix.scratch.New = func() any {
		return &scratch{acc: make([]float64, n)}
	}
	return ix
}

// Index is an immutable BM25 index over documents 0 … Len()−1. It is safe
// for concurrent use by any number of goroutines.
type Index struct {
	terms  map[string]int32
	start  []int32   // postings of term t are doc[start[t]:start[t+1]]
	doc    []int32   // document ids, ascending within a term
	impact []float64 // IDF(t) · tf part, aligned with doc
	idf    []float64 // by term id
	docLen []int32
	avgdl  float64

	scratch sync.Pool // of *scratch
}

// scratch is the per-query working memory: dense accumulators (zero
// between queries), the documents touched, the query's term ids and a
// token buffer.
type scratch struct {
	acc      []float64
	sum      []float64
	touched  []int32
	rejected []int32
	terms    []int32
	buf      []byte
}

// Hit is one search result.
type Hit struct {
	// Doc is the document id that Builder.Add returned.
	Doc int
	// Score is the document's BM25 score (> 0).
	Score float64
}

// Len returns the number of documents in the index.
func (ix *Index) Len() int { return len(ix.docLen) }

// Terms returns the number of distinct terms in the index.
func (ix *Index) Terms() int { return len(ix.idf) }

// DocLen returns the number of tokens of document doc.
func (ix *Index) DocLen(doc int) int { return int(ix.docLen[doc]) }

// AvgDocLen returns the mean document length in tokens (0 when empty).
func (ix *Index) AvgDocLen() float64 { return ix.avgdl }

// IDF returns the inverse document frequency of term (already a token, as
// Tokenize returns it) and whether the index holds it.
func (ix *Index) IDF(term string) (float64, bool) {
	t, ok := ix.terms[term]
	if !ok {
		return 0, false
	}
	return ix.idf[t], true
}

// DF returns how many documents hold term.
func (ix *Index) DF(term string) int {
	t, ok := ix.terms[term]
	if !ok {
		return 0
	}
	return int(ix.start[t+1] - ix.start[t])
}

// Score returns document doc's BM25 score for the distinct terms, summed
// in their order as SearchTerms sums them (0 when it holds none).
func (ix *Index) Score(terms []string, doc int) float64 {
	score := 0.0
	for _, term := range terms {
		t, ok := ix.terms[term]
		if !ok {
			continue
		}
		docs := ix.doc[ix.start[t]:ix.start[t+1]]
		if i, found := slices.BinarySearch(docs, int32(doc)); found {
			score += ix.impact[int(ix.start[t])+i]
		}
	}
	return score
}

// SearchTerms is Search for a query already split into distinct terms,
// of which only those with selecting[i] set select documents: a document
// that holds none of them is not a hit, however many of the others it
// holds (they still add to the score of the documents selected). A nil
// selecting selects on every term. Scores are summed in the terms' order.
// Unlike Search, it asks filter about every selected document, once,
// before scoring: a scoped search then scores only what it may return.
func (ix *Index) SearchTerms(terms []string, selecting []bool, k int, dst []Hit, filter func(doc int) bool) []Hit {
	dst = dst[:0]
	if len(ix.docLen) == 0 {
		return dst
	}
	s := ix.scratch.Get().(*scratch)
	defer ix.scratch.Put(s)
	acc := s.acc
	s.touched, s.rejected = s.touched[:0], s.rejected[:0]
	// Mark the selected documents the filter allows, acc[d] = -1 until
	// scored, and those it refuses, acc[d] = -2: filtering first spares
	// scoring what a scoped search cannot return.
	for i, term := range terms {
		t, ok := ix.terms[term]
		if !ok || (selecting != nil && !selecting[i]) {
			continue
		}
		for _, d := range ix.doc[ix.start[t]:ix.start[t+1]] {
			switch {
			case acc[d] != 0:
			case filter == nil || filter(int(d)):
				acc[d] = -1
				s.touched = append(s.touched, d)
			default:
				acc[d] = -2
				s.rejected = append(s.rejected, d)
			}
		}
	}
	for _, d := range s.rejected {
		acc[d] = 0
	}
	if len(s.touched) == 0 {
		return dst
	}
	// Score them, term by term in query order, in a second array so
	// that the sums are those of Score.
	if cap(s.sum) < len(acc) {
		s.sum = make([]float64, len(acc))
	}
	sum := s.sum[:len(acc)]
	for _, term := range terms {
		t, ok := ix.terms[term]
		if !ok {
			continue
		}
		lo, hi := ix.start[t], ix.start[t+1]
		docs, impacts := ix.doc[lo:hi], ix.impact[lo:hi]
		if len(docs) > lookupFactor*len(s.touched) {
			lookup(docs, impacts, s.touched, sum)
			continue
		}
		for i, d := range docs {
			if acc[d] != 0 {
				sum[d] += impacts[i]
			}
		}
	}
	for _, d := range s.touched {
		acc[d] = 0
	}
	return top(dst, k, s.touched, sum, nil, nil)
}

// lookupFactor is how many times longer than the selected documents a
// posting list must be for SearchTerms to look each selected document up
// in it (log₂ of the list's length steps each) rather than walk the list:
// a frequent term that does not select (memory.SelectDF) then costs what
// the selection costs, not what the corpus holds.
const lookupFactor = 16

// lookup adds to sum[d] the impact of each touched document d found in
// the posting list docs (ascending).
func lookup(docs []int32, impacts []float64, touched []int32, sum []float64) {
	for _, d := range touched {
		if i, found := slices.BinarySearch(docs, d); found {
			sum[d] += impacts[i]
		}
	}
}

// Search appends to dst[:0] the at most k best documents for query, best
// first, ties broken by lower document id, and returns the extended slice.
// k ≤ 0 means every matching document. Only documents with a positive score
// (sharing at least one term with the query) are hits. When filter is not
// nil, only documents for which it returns true are considered — use it for
// scoping (a user's documents, a skill allow list); it is called at most
// once per matching document.
//
// Search allocates nothing when cap(dst) ≥ the number of hits returned and
// the index's scratch pool holds a free buffer (always, after warm-up, for
// one query at a time per goroutine).
func (ix *Index) Search(query string, k int, dst []Hit, filter func(doc int) bool) []Hit {
	dst = dst[:0]
	if len(ix.docLen) == 0 {
		return dst
	}
	s := ix.scratch.Get().(*scratch)
	defer ix.scratch.Put(s)

	// Distinct query terms known to the index.
	s.terms = s.terms[:0]
	s.buf = eachToken(query, s.buf, func(tok []byte) {
		t, ok := ix.terms[string(tok)]
		if ok && !slices.Contains(s.terms, t) {
			s.terms = append(s.terms, t)
		}
	})
	if len(s.terms) == 0 {
		return dst
	}
	// Accumulate. Terms are summed in query order, the same for every
	// document, so equal documents get bit-identical scores.
	acc := s.acc
	s.touched = s.touched[:0]
	for _, t := range s.terms {
		lo, hi := ix.start[t], ix.start[t+1]
		docs, impacts := ix.doc[lo:hi], ix.impact[lo:hi]
		for i, d := range docs {
			if acc[d] == 0 {
				s.touched = append(s.touched, d)
			}
			acc[d] += impacts[i]
		}
	}
	return top(dst, k, s.touched, acc, filter, nil)
}

// top appends to dst (empty) the at most k best of the touched
// documents by score, best first (k ≤ 0: all of them), and zeroes their
// scores for the next query. It keeps a bounded min-heap, the worst hit
// at dst[0], and asks filter only about a document that would enter it:
// once the heap is full, few do. A hit's Doc is place[d] (d when place
// is nil), and ties break by it.
func top(dst []Hit, k int, touched []int32, score []float64, filter func(doc int) bool, place []int32) []Hit {
	if k <= 0 || k > len(touched) {
		k = len(touched)
	}
	for _, d := range touched {
		h := Hit{Doc: int(d), Score: score[d]}
		if place != nil {
			h.Doc = int(place[d])
		}
		score[d] = 0
		full := len(dst) == k
		if full && !better(h, dst[0]) || filter != nil && !filter(h.Doc) {
			continue
		}
		if full {
			dst[0] = h
			siftDown(dst, 0)
		} else {
			dst = append(dst, h)
			siftUp(dst, len(dst)-1)
		}
	}
	// Heap sort: the worst hit in turn to the back, best first at the end.
	for n := len(dst) - 1; n > 0; n-- {
		dst[0], dst[n] = dst[n], dst[0]
		siftDown(dst[:n], 0)
	}
	return dst
}

// better reports whether a ranks before b: higher score, then lower id.
func better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.Doc < b.Doc
}

// siftUp and siftDown maintain a heap whose root is the worst hit.
func siftUp(h []Hit, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !better(h[p], h[i]) {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

func siftDown(h []Hit, i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		worst := l
		if r := l + 1; r < n && better(h[l], h[r]) {
			worst = r
		}
		if !better(h[i], h[worst]) {
			return
		}
		h[i], h[worst] = h[worst], h[i]
		i = worst
	}
}
