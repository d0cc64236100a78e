package bm25

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// fromScratch is a Dynamic made at once from docs, in their order.
func fromScratch(t *testing.T, docs []string) *Dynamic {
	t.Helper()
	d := NewDynamic(nil)
	var ch Change
	for i, text := range docs {
		ch.Added = append(ch.Added, d.Analyze(text))
		ch.Order = append(ch.Order, int32(-1-i))
	}
	if err := d.Update(ch); err != nil {
		t.Fatal(err)
	}
	return d
}

// change moves d from the documents old to new: the documents of new
// found in old (by text, first unused) are kept, the others added, and
// old's left over removed.
func change(t *testing.T, d *Dynamic, old, new []string) {
	t.Helper()
	used := make([]bool, len(old))
	var ch Change
	for _, text := range new {
		i := slices.IndexFunc(old, func(o string) bool { return o == text })
		for i >= 0 && used[i] {
			j := slices.IndexFunc(old[i+1:], func(o string) bool { return o == text })
			if j < 0 {
				i = -1
				break
			}
			i += 1 + j
		}
		if i >= 0 {
			used[i] = true
			ch.Order = append(ch.Order, int32(i))
			continue
		}
		ch.Order = append(ch.Order, int32(-1-len(ch.Added)))
		ch.Added = append(ch.Added, d.Analyze(text))
	}
	for i, u := range used {
		if !u {
			ch.Removed = append(ch.Removed, Removal{Place: int32(i), Doc: d.Analyze(old[i])})
		}
	}
	if err := d.Update(ch); err != nil {
		t.Fatal(err)
	}
}

var dynamicWords = strings.Fields("invoice garden tomato printer wifi password lake hiking deploy release customer ledger order warehouse oat milk coffee meeting budget fridge")

func randomDoc(r *rand.Rand) string {
	w := make([]string, 1+r.IntN(12))
	for i := range w {
		w[i] = dynamicWords[r.IntN(len(dynamicWords))]
		if r.IntN(20) == 0 {
			w[i] = fmt.Sprintf("rare%d", r.IntN(1000))
		}
	}
	return strings.Join(w, " ")
}

// sameDynamic fails unless a and b answer every query alike, to the bit.
func sameDynamic(t *testing.T, a, b *Dynamic, step int) {
	t.Helper()
	if a.Len() != b.Len() {
		t.Fatalf("step %d: %d documents, rebuilt %d", step, a.Len(), b.Len())
	}
	queries := [][]string{{"invoice"}, {"garden", "tomato"}, {"oat", "milk", "coffee", "zeppelin"}, {"customer", "ledger", "order", "budget"}, {"rare1", "printer"}}
	for _, q := range queries {
		for _, term := range q {
			if a.DF(term) != b.DF(term) {
				t.Fatalf("step %d: DF(%s) %d, rebuilt %d", step, term, a.DF(term), b.DF(term))
			}
		}
		odd := func(place int) bool { return place%2 == 1 }
		sel := make([]bool, len(q))
		sel[0] = true
		for _, k := range []int{0, 3} {
			for _, f := range []func(int) bool{nil, odd} {
				for _, s := range [][]bool{nil, sel} {
					ha, hb := a.SearchTerms(q, s, k, nil, f), b.SearchTerms(q, s, k, nil, f)
					if !reflect.DeepEqual(ha, hb) {
						t.Fatalf("step %d: SearchTerms(%q, k %d) = %v, rebuilt %v", step, q, k, ha, hb)
					}
				}
			}
		}
		for place := range a.Len() {
			if sa, sb := a.Score(q, place), b.Score(q, place); sa != sb {
				t.Fatalf("step %d: Score(%q, %d) = %v, rebuilt %v", step, q, place, sa, sb)
			}
		}
	}
}

// TestDynamicMatchesRebuild: after any sequence of changes (documents
// added anywhere in the order, removed, kept), with or without
// compaction, a Dynamic answers as one made from scratch, and as an
// Index built in the same order scores.
func TestDynamicMatchesRebuild(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed-", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			d := NewDynamic(nil)
			var docs []string
			for step := range 120 {
				next := slices.Clone(docs)
				for range 1 + r.IntN(6) {
					switch i := r.IntN(len(next) + 1); {
					case len(next) > 0 && r.IntN(3) == 0:
						next = slices.Delete(next, i%len(next), i%len(next)+1)
					case len(next) > 0 && r.IntN(2) == 0:
						next[i%len(next)] = randomDoc(r) // an edit: removed and added
					default:
						next = slices.Insert(next, i, randomDoc(r))
					}
				}
				change(t, d, docs, next)
				docs = next
				if d.Garbage() || step%40 == 39 {
					d = d.Compact()
				}
				sameDynamic(t, d, fromScratch(t, docs), step)
			}
			var b Builder
			for _, text := range docs {
				b.Add(text)
			}
			ix := b.Build()
			q := []string{"garden", "tomato", "customer"}
			if got, want := d.SearchTerms(q, nil, 0, nil, nil), ix.SearchTerms(q, nil, 0, nil, nil); !reflect.DeepEqual(got, want) {
				t.Errorf("Dynamic %v, Index %v", got, want)
			}
		})
	}
}

// TestDynamicUpdateRefused: a change that does not fit changes nothing.
func TestDynamicUpdateRefused(t *testing.T) {
	docs := []string{"printer toner", "the printer on floor two", "lake hiking"}
	d := fromScratch(t, docs)
	other := d.Analyze("printer toner toner")
	tests := []struct {
		name string
		ch   Change
	}{
		{"a place named twice", Change{Order: []int32{0, 0, 1}, Removed: []Removal{{2, d.Analyze(docs[2])}}}},
		{"a place left out", Change{Order: []int32{0, 1}}},
		{"a place out of range", Change{Order: []int32{0, 1, 2, 3}}},
		{"a place out of range, an added document left out", Change{Order: []int32{0, 1, 2, 3}, Added: []Doc{other}}},
		{"an added document not placed", Change{Order: []int32{0, 1, 2}, Added: []Doc{other}}},
		{"a kept document removed", Change{Order: []int32{0, 1, 2}, Removed: []Removal{{0, d.Analyze(docs[0])}}}},
		{"a removal of another text", Change{Order: []int32{1, 2}, Removed: []Removal{{0, other}}}},
		{"a removal of a new text", Change{Order: []int32{1, 2}, Removed: []Removal{{0, d.Analyze("zeppelin")}}}},
	}
	for _, tt := range tests {
		if err := d.Update(tt.ch); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
		sameDynamic(t, d, fromScratch(t, docs), 0)
	}
}

// TestDynamicChangeCostsWhatItChanges: an update adds postings for what
// it adds only, and Compact drops the removed documents' postings.
func TestDynamicChangeCostsWhatItChanges(t *testing.T) {
	docs := make([]string, 1000)
	for i := range docs {
		docs[i] = fmt.Sprintf("entry %d about the garden", i)
	}
	d := fromScratch(t, docs)
	postings := func(d *Dynamic) int {
		n := 0
		for t := range int32(d.vocab.len()) {
			n += len(d.postings(t))
		}
		return n
	}
	before := postings(d)
	next := slices.Clone(docs)
	next[500] = "entry 500 about the garden and the lake"
	change(t, d, docs, next)
	if got := postings(d) - before; got != 7 {
		t.Errorf("replacing one document added %d postings, want 7", got)
	}
	c := d.Compact()
	if got := postings(c); got != before+2 {
		t.Errorf("compacted: %d postings, want %d", got, before+2)
	}
	sameDynamic(t, c, fromScratch(t, next), 0)
}

// BenchmarkDynamicMemory: the heap a Dynamic takes for 5,000 chunks of
// 20 appended entries each, each entry with two numbers of its own (as
// memory holds names, numbers and days): bytes a term and a posting.
func BenchmarkDynamicMemory(b *testing.B) {
	docs := make([]string, 5000)
	for i := range docs {
		var sb strings.Builder
		for j := range 20 {
			n := i*20 + j
			fmt.Fprintf(&sb, "entry %d: met customer %d about invoice %d\n", n, n%977, n*7)
		}
		docs[i] = sb.String()
	}
	var d *Dynamic
	for b.Loop() {
		d = NewDynamic(nil)
		var ch Change
		for i, text := range docs {
			ch.Added = append(ch.Added, d.Analyze(text))
			ch.Order = append(ch.Order, int32(-1-i))
		}
		if err := d.Update(ch); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	with := heap()
	terms, postings := d.vocab.len(), 0
	for t := range int32(terms) {
		postings += len(d.postings(t))
	}
	d = nil
	size := float64(with - heap())
	b.ReportMetric(size/(1<<20), "heap-MB")
	b.ReportMetric(size/float64(terms), "B/term")
	b.ReportMetric(float64(terms), "terms")
	b.ReportMetric(float64(postings), "postings")
}

// TestDynamicExtendAndResolved: a log whose last document grows by
// appends, each append removing the last document by the Doc kept
// (Resolved, Renumbered by compactions) since it was added and adding
// its Extend, answers as a
// Dynamic made from scratch; Extend is what Analyze makes of the whole
// text, and a Doc kept across Updates removes its document as one
// analysed again would.
func TestDynamicExtendAndResolved(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed-", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 11))
			d := NewDynamic(nil)
			var docs []string
			var last Doc // the Doc the last document was added with
			var ok bool
			for step := range 150 {
				more := randomDoc(r)
				ch := Change{Order: make([]int32, 0, len(docs)+1)}
				for i := range docs {
					ch.Order = append(ch.Order, int32(i))
				}
				var added Doc
				if len(docs) == 0 || r.IntN(8) == 0 {
					if len(docs) > 1 && r.IntN(2) == 0 { // the first goes, and terms with it
						ch.Order = ch.Order[1:]
						ch.Removed = []Removal{{Place: 0, Doc: d.Analyze(docs[0])}}
						docs = docs[1:]
					}
					added = d.Analyze(more)
					docs = append(docs, more)
				} else {
					whole := docs[len(docs)-1] + "\n" + more
					kept, ok := d.Resolved(last)
					if !ok {
						t.Fatalf("step %d: the last document's Doc holds a term the index lacks", step)
					}
					added = d.Extend(kept, more)
					if want := d.Analyze(whole); !reflect.DeepEqual(added, want) {
						t.Fatalf("step %d: Extend %+v, Analyze %+v", step, added, want)
					}
					ch.Order = ch.Order[:len(docs)-1]
					ch.Removed = []Removal{{Place: int32(len(docs) - 1), Doc: kept}}
					docs[len(docs)-1] = whole
				}
				ch.Order = append(ch.Order, -1)
				ch.Added = []Doc{added}
				if err := d.Update(ch); err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				last = added
				if step%10 == 9 { // a compaction renumbers the terms
					c := d.Compact()
					last, _ = d.Resolved(last)
					if last, ok = c.Renumbered(d, last); !ok {
						t.Fatalf("step %d: the last document's Doc holds a term the compaction lacks", step)
					}
					d = c
				}
				sameDynamic(t, d, fromScratch(t, docs), step)
			}
		})
	}
}
