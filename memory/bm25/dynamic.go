package bm25

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// Dynamic is a BM25 index that changes in place: Update adds and removes
// documents at the cost of what they hold, not of what the index holds.
// It keeps each posting's raw term frequency and each document's length,
// and weighs them with the collection's current N, document frequencies
// and mean length when it is searched, so a Dynamic ranks exactly (to the
// bit) as one made at once from the same documents in the same order.
//
// A document is known by its place in an order the caller gives with
// each change (the embedded memory store's: by user, path and line):
// hits, filters, Score and ties speak of places, so ties break as in an
// index built in that order. Within, a document keeps the slot it was
// added at until it is removed; a removed document's postings stay until
// Compact drops them.
//
// Any number of goroutines may search a Dynamic, and Analyze and Compact
// may read it meanwhile, but Update must run alone: the caller holds a
// write lock around it (the memory store's).
type Dynamic struct {
	analyzer Analyzer
	vocab    vocab
	// A term's postings (rawPosting.doc a slot, ascending) are head[t]
	// alone when tail[t] is 0, else lists[tail[t]] (postings): most
	// terms have one, and a slice for each cost 24 bytes more.
	head    []rawPosting   // by term id
	tail    []int32        // by term id
	lists   [][]rawPosting // lists[0] is unused
	df      []int32        // by term id: the live documents holding it
	docLen  []int32        // by slot; -1 once removed
	place   []int32        // by slot: its place; -1 once removed
	slots   []int32        // by place
	total   int64          // tokens of the live documents
	spare   []int32        // the last order's slots, reused by the next
	scratch sync.Pool      // of *scratch
}

// NewDynamic returns an empty Dynamic whose documents analyzer splits
// into terms (nil: EachToken). Queries are split by the caller
// (SearchTerms).
func NewDynamic(analyzer Analyzer) *Dynamic {
	if analyzer == nil {
		analyzer = eachToken
	}
	return &Dynamic{analyzer: analyzer, vocab: newVocab(), lists: make([][]rawPosting, 1)}
}

// postings returns term t's postings.
func (d *Dynamic) postings(t int32) []rawPosting {
	if i := d.tail[t]; i != 0 {
		return d.lists[i]
	}
	return d.head[t : t+1]
}

// addPosting appends p to term t's postings.
func (d *Dynamic) addPosting(t int32, p rawPosting) {
	if i := d.tail[t]; i != 0 {
		d.lists[i] = append(d.lists[i], p)
		return
	}
	d.tail[t] = int32(len(d.lists))
	d.lists = append(d.lists, []rawPosting{d.head[t], p})
}

// newTerm adds the postings, first alone, of the term vocab just
// numbered, held by df documents.
func (d *Dynamic) newTerm(first rawPosting, df int32) {
	d.head = append(d.head, first)
	d.tail = append(d.tail, 0)
	d.df = append(d.df, df)
}

// Doc is a document analysed for a Dynamic by Analyze: its length and
// its distinct terms with their counts, those the Dynamic held by id.
// It is valid for the Dynamic's next Update only, unless Resolved after
// it.
type Doc struct {
	n     int32
	known []rawPosting // doc = term id
	fresh []freshTerm
}

type freshTerm struct {
	term string
	tf   int32
}

// Analyze splits text into the Doc that Update adds or removes. It only
// reads d.
func (d *Dynamic) Analyze(text string) Doc {
	var doc Doc
	var ids []int32
	var fresh []string
	d.analyzer(text, nil, func(tok []byte) {
		doc.n++
		if id, ok := d.vocab.find(tok); ok {
			ids = append(ids, id)
		} else {
			fresh = append(fresh, string(tok))
		}
	})
	slices.Sort(ids)
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && ids[j] == ids[i] {
			j++
		}
		doc.known = append(doc.known, rawPosting{doc: ids[i], tf: int32(j - i)})
		i = j
	}
	slices.Sort(fresh)
	for i := 0; i < len(fresh); {
		j := i + 1
		for j < len(fresh) && fresh[j] == fresh[i] {
			j++
		}
		doc.fresh = append(doc.fresh, freshTerm{term: fresh[i], tf: int32(j - i)})
		i = j
	}
	return doc
}

// Extend returns the Doc of a text made of the text doc was analysed
// from, a line break and more: what Analyze would return for it, at the
// cost of analysing more only. It holds for an analyzer that ends a term
// at a line break and analyses each term alone (EachToken and those
// built on it do). doc is one of d's (Analyze, Extend or Resolved); a
// term it held as new that an Update since added is numbered as d holds
// it. It only reads d.
func (d *Dynamic) Extend(doc Doc, more string) Doc {
	doc, _ = d.Resolved(doc)
	tail := d.Analyze(more)
	out := Doc{n: doc.n + tail.n}
	out.known = mergeKnown(doc.known, tail.known)
	out.fresh = mergeFresh(doc.fresh, tail.fresh)
	return out
}

// Resolved returns doc with the terms that were new to d when it was
// analysed, and that d holds now (an Update added them), numbered as d
// holds them, and whether it holds every one. A Doc that holds no new
// term stays a valid Removal of the document it was added with for as
// long as d holds that document: d numbers its terms for good (a Compact
// of d numbers them anew, in another Dynamic).
func (d *Dynamic) Resolved(doc Doc) (Doc, bool) {
	if len(doc.fresh) == 0 {
		return doc, true
	}
	var ids []rawPosting
	var still []freshTerm
	for _, f := range doc.fresh {
		if id, ok := d.vocab.findString(f.term); ok {
			ids = append(ids, rawPosting{doc: id, tf: f.tf})
		} else {
			still = append(still, f)
		}
	}
	slices.SortFunc(ids, func(a, b rawPosting) int { return cmp.Compare(a.doc, b.doc) })
	return Doc{n: doc.n, known: mergeKnown(doc.known, ids), fresh: still}, len(still) == 0
}

// Renumbered returns doc, a Doc of from that holds no new term
// (Resolved), numbered as d, a Compact of from, numbers its terms, and
// whether d holds them all (it does when from's document is one of d's).
func (d *Dynamic) Renumbered(from *Dynamic, doc Doc) (Doc, bool) {
	if len(doc.fresh) > 0 {
		return Doc{}, false
	}
	out := Doc{n: doc.n, known: make([]rawPosting, 0, len(doc.known))}
	for _, p := range doc.known {
		id, ok := d.vocab.find(from.vocab.term(p.doc))
		if !ok {
			return Doc{}, false
		}
		out.known = append(out.known, rawPosting{doc: id, tf: p.tf})
	}
	slices.SortFunc(out.known, func(a, b rawPosting) int { return cmp.Compare(a.doc, b.doc) })
	return out, true
}

// mergeCounts is the union of two lists of term counts ascending by
// key, a term in both counted once with the sum of its counts.
func mergeCounts[T any, K cmp.Ordered](a, b []T, key func(T) K, plus func(T, T) T) []T {
	if len(b) == 0 {
		return a
	}
	out := make([]T, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		switch ka, kb := key(a[0]), key(b[0]); {
		case ka < kb:
			out, a = append(out, a[0]), a[1:]
		case ka > kb:
			out, b = append(out, b[0]), b[1:]
		default:
			out = append(out, plus(a[0], b[0]))
			a, b = a[1:], b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// mergeKnown is mergeCounts of lists ascending by term id.
func mergeKnown(a, b []rawPosting) []rawPosting {
	return mergeCounts(a, b, func(p rawPosting) int32 { return p.doc },
		func(p, q rawPosting) rawPosting { return rawPosting{doc: p.doc, tf: p.tf + q.tf} })
}

// mergeFresh is mergeCounts of lists ascending by term.
func mergeFresh(a, b []freshTerm) []freshTerm {
	return mergeCounts(a, b, func(f freshTerm) string { return f.term },
		func(f, g freshTerm) freshTerm { return freshTerm{term: f.term, tf: f.tf + g.tf} })
}

// Change is what Update applies.
type Change struct {
	// Order is the documents in their new order: a value ≥ 0 is the
	// document at that place of the current order, -1 - i is Added[i].
	Order []int32
	// Added are the documents added, each named once by Order.
	Added []Doc
	// Removed are the documents of the current order that Order leaves
	// out, each analysed from its text.
	Removed []Removal
}

// Removal is a document to remove: its current place, and the Doc of
// the text it was added with.
type Removal struct {
	Place int32
	Doc   Doc
}

// Update applies ch. It checks ch first and, when ch does not fit the
// index (a place out of range, named twice or not at all, a removed
// document whose text is not the one it was added with), returns an
// error and changes nothing.
func (d *Dynamic) Update(ch Change) error {
	if err := d.check(ch); err != nil {
		return err
	}
	for _, r := range ch.Removed {
		slot := d.slots[r.Place]
		for _, p := range r.Doc.known {
			d.df[p.doc]--
		}
		d.total -= int64(d.docLen[slot])
		d.docLen[slot], d.place[slot] = -1, -1
	}
	added := make([]int32, len(ch.Added))
	for i, doc := range ch.Added {
		added[i] = d.add(doc)
	}
	slots := d.spare[:0]
	for _, o := range ch.Order {
		if o >= 0 {
			slots = append(slots, d.slots[o])
		} else {
			slots = append(slots, added[-1-o])
		}
	}
	d.spare, d.slots = d.slots, slots
	for i, s := range slots {
		d.place[s] = int32(i)
	}
	return nil
}

// check reports whether ch fits d (see Update).
func (d *Dynamic) check(ch Change) error {
	n := len(d.slots)
	named := make([]bool, n+len(ch.Added))
	for _, o := range ch.Order {
		i := int(o)
		switch {
		case o < 0:
			i = n + int(-1-o)
		case i >= n:
			i = len(named) // out of range
		}
		if i >= len(named) || named[i] {
			return fmt.Errorf("bm25: order names %d twice or out of range", o)
		}
		named[i] = true
	}
	for _, r := range ch.Removed {
		if r.Place < 0 || int(r.Place) >= n || named[r.Place] {
			return fmt.Errorf("bm25: removed place %d is kept, out of range or removed twice", r.Place)
		}
		named[r.Place] = true
		slot := d.slots[r.Place]
		if len(r.Doc.fresh) > 0 || r.Doc.n != d.docLen[slot] {
			return fmt.Errorf("bm25: removed place %d: not the text it was added with", r.Place)
		}
		for _, p := range r.Doc.known {
			list := d.postings(p.doc)
			if i, ok := findSlot(list, slot); !ok || list[i].tf != p.tf {
				return fmt.Errorf("bm25: removed place %d: not the text it was added with", r.Place)
			}
		}
	}
	if slices.Contains(named, false) {
		return errors.New("bm25: a document is neither kept nor removed, or an added one is not placed")
	}
	return nil
}

// findSlot is where slot is, or would be, in list (ascending by slot),
// and whether it is there: slices.BinarySearchFunc with a comparison
// function, which the compiler does not inline, made a frequent term's
// look-ups the larger part of a search.
func findSlot(list []rawPosting, slot int32) (int, bool) {
	lo, hi := 0, len(list)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if list[m].doc < slot {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(list) && list[lo].doc == slot
}

// add adds doc at a new slot and returns it.
func (d *Dynamic) add(doc Doc) int32 {
	slot := int32(len(d.docLen))
	d.docLen = append(d.docLen, doc.n)
	d.place = append(d.place, -1)
	d.total += int64(doc.n)
	for _, p := range doc.known {
		d.addPosting(p.doc, rawPosting{doc: slot, tf: p.tf})
		d.df[p.doc]++
	}
	for _, f := range doc.fresh {
		// A term new to Analyze may have come with an earlier added
		// document of the same Update.
		if id, ok := d.vocab.findString(f.term); ok {
			d.addPosting(id, rawPosting{doc: slot, tf: f.tf})
			d.df[id]++
			continue
		}
		d.vocab.addString(f.term)
		d.newTerm(rawPosting{doc: slot, tf: f.tf}, 1)
	}
	return slot
}

// Len returns the number of documents.
func (d *Dynamic) Len() int { return len(d.slots) }

// DF returns how many documents hold term.
func (d *Dynamic) DF(term string) int {
	if t, ok := d.vocab.findString(term); ok {
		return int(d.df[t])
	}
	return 0
}

// Garbage reports whether removed documents' postings take enough room
// (as many slots as the live documents, past a floor) for Compact to be
// worth its cost.
func (d *Dynamic) Garbage() bool {
	dead := len(d.docLen) - len(d.slots)
	return dead > len(d.slots) && dead > compactFloor
}

const compactFloor = 256

// Compact returns a Dynamic of d's documents, in d's order, without the
// postings of removed documents (nor terms no document holds any more).
// It only reads d, which stays as it was.
func (d *Dynamic) Compact() *Dynamic {
	c := &Dynamic{analyzer: d.analyzer, vocab: newVocab(), lists: make([][]rawPosting, 1), docLen: make([]int32, 0, len(d.slots)), place: make([]int32, 0, len(d.slots)), total: d.total}
	renum := make([]int32, len(d.docLen)) // old slot → new slot
	for s, l := range d.docLen {
		if l < 0 {
			renum[s] = -1
			continue
		}
		renum[s] = int32(len(c.docLen))
		c.docLen = append(c.docLen, l)
		c.place = append(c.place, d.place[s])
	}
	c.slots = make([]int32, len(d.slots))
	for i, s := range d.slots {
		c.slots[i] = renum[s]
	}
	for t := range int32(d.vocab.len()) {
		if d.df[t] == 0 {
			continue
		}
		list := compacted(d.postings(t), renum, d.df[t])
		id := c.vocab.addBytes(d.vocab.term(t))
		c.newTerm(list[0], d.df[t])
		if len(list) > 1 {
			c.tail[id] = int32(len(c.lists))
			c.lists = append(c.lists, list)
		}
	}
	return c
}

// compacted is list without removed slots, renumbered.
func compacted(list []rawPosting, renum []int32, live int32) []rawPosting {
	out := make([]rawPosting, 0, live)
	for _, p := range list {
		if s := renum[p.doc]; s >= 0 {
			out = append(out, rawPosting{doc: s, tf: p.tf})
		}
	}
	return out
}

// DocNorm is the length part of the BM25 weight of a document of dl
// tokens, avgdl the mean. Its explicit conversions round each step, so
// no fused multiply-add makes it differ between where it is computed.
func DocNorm(dl int32, avgdl float64) float64 {
	r := float64(B * float64(dl) / avgdl)
	return float64(K1 * float64(1-B+r))
}

// Weight is a term's BM25 weight in a document: idf, its count there
// and the document's norm (DocNorm). A store that scores
// elsewhere (PostgreSQL's) calls both, so that its scores are these bit
// for bit.
func Weight(idf float64, tf int32, norm float64) float64 {
	f := float64(tf)
	return idf * f * (K1 + 1) / (f + norm)
}

// Score returns the BM25 score of the document at place for the distinct
// terms, summed in their order as SearchTerms sums them.
func (d *Dynamic) Score(terms []string, place int) float64 {
	n := len(d.slots)
	slot := d.slots[place]
	norm := DocNorm(d.docLen[slot], AvgDocLen(d.total, n))
	score := 0.0
	for _, term := range terms {
		t, ok := d.vocab.findString(term)
		if !ok || d.df[t] == 0 {
			continue
		}
		list := d.postings(t)
		if i, found := findSlot(list, slot); found {
			score += Weight(IDF(n, int(d.df[t])), list[i].tf, norm)
		}
	}
	return score
}

// SearchTerms is Index.SearchTerms on a Dynamic: it appends to dst[:0]
// the at most k best documents (k ≤ 0: all) holding a selecting term
// (selecting nil: any term) that filter allows (nil: all), best first,
// ties broken by lower place; Hit.Doc is the place. filter is asked once
// about each selected document, before scoring.
func (d *Dynamic) SearchTerms(terms []string, selecting []bool, k int, dst []Hit, filter func(place int) bool) []Hit {
	dst = dst[:0]
	n := len(d.slots)
	if n == 0 {
		return dst
	}
	s := d.getScratch()
	defer d.scratch.Put(s)
	acc, norm := s.acc, s.sum // acc: -1 selected, -2 refused; norm by slot
	avgdl := AvgDocLen(d.total, n)
	s.touched, s.rejected = s.touched[:0], s.rejected[:0]
	for i, term := range terms {
		t, ok := d.vocab.findString(term)
		if !ok || (selecting != nil && !selecting[i]) {
			continue
		}
		for _, p := range d.postings(t) {
			// place is -1 once removed: one array read for both.
			switch slot, place := p.doc, d.place[p.doc]; {
			case acc[slot] != 0 || place < 0:
			case filter == nil || filter(int(place)):
				acc[slot] = -1
				norm[slot] = DocNorm(d.docLen[slot], avgdl)
				s.touched = append(s.touched, slot)
			default:
				acc[slot] = -2
				s.rejected = append(s.rejected, slot)
			}
		}
	}
	for _, slot := range s.rejected {
		acc[slot] = 0
	}
	if len(s.touched) == 0 {
		return dst
	}
	// Score the selected documents term by term, in query order, into
	// acc (from 0), so that the sums are those of Score.
	for _, slot := range s.touched {
		acc[slot] = 0
	}
	for _, term := range terms {
		t, ok := d.vocab.findString(term)
		if !ok || d.df[t] == 0 {
			continue
		}
		idf, list := IDF(n, int(d.df[t])), d.postings(t)
		if len(list) > lookupFactor*len(s.touched) {
			for _, slot := range s.touched {
				if i, found := findSlot(list, slot); found {
					acc[slot] += Weight(idf, list[i].tf, norm[slot])
				}
			}
			continue
		}
		for _, p := range list {
			if norm[p.doc] != 0 {
				acc[p.doc] += Weight(idf, p.tf, norm[p.doc])
			}
		}
	}
	for _, slot := range s.touched {
		norm[slot] = 0
	}
	return top(dst, k, s.touched, acc, nil, d.place)
}

// getScratch returns query scratch space with room for every slot.
func (d *Dynamic) getScratch() *scratch {
	s, _ := d.scratch.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	if len(s.acc) < len(d.docLen) {
		size := len(d.docLen) + len(d.docLen)/4
		s.acc, s.sum = make([]float64, size), make([]float64, size)
	}
	return s
}
