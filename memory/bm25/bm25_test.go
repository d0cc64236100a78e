package bm25

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestTokenize(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a", nil},
		{"a b c", nil},
		{"é", nil},
		{"日", nil},
		{"ab", []string{"ab"}},
		{"Convert a PDF to Markdown!", []string{"convert", "pdf", "to", "markdown"}},
		{"daily-log_hygiene.v2", []string{"daily", "log", "hygiene", "v2"}},
		{"ÉCOLE Straße", []string{"école", "straße"}},
		{"日本語 テキスト", []string{"日本語", "テキスト"}},
		{"x1 42 7", []string{"x1", "42"}},
		{"tab\there\nnew\r\nline", []string{"tab", "here", "new", "line"}},
		{"bad\xffutf8", []string{"bad", "utf8"}},
		{"e\u0301te", []string{"te"}}, // combining mark is a separator
		{"ÀB", []string{"àb"}},
	}
	for _, tt := range tests {
		got := Tokenize(tt.in)
		if !slices.Equal(got, tt.want) {
			t.Errorf("Tokenize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// referenceTokenize is the specification written as plainly as possible.
func referenceTokenize(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		lower := strings.Map(unicode.ToLower, f)
		if utf8.RuneCountInString(f) > 1 {
			out = append(out, lower)
		}
	}
	return out
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"", "a", "Convert a PDF", "日本語 テキスト", "bad\xffutf8", "ÉCOLE-42", "e\u0301te"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Tokenize(s)
		if want := referenceTokenize(s); !slices.Equal(got, want) {
			t.Fatalf("Tokenize(%q) = %q, reference %q", s, got, want)
		}
		for _, tok := range got {
			if utf8.RuneCountInString(tok) < 2 {
				t.Fatalf("token %q of %q is shorter than two code points", tok, s)
			}
			for _, r := range tok {
				if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
					t.Fatalf("token %q of %q holds separator %q", tok, s, r)
				}
			}
		}
		// The index must agree with the tokenizer: a document made of the
		// text is found by each of its tokens.
		var b Builder
		b.Add(s)
		ix := b.Build()
		if ix.DocLen(0) != len(got) {
			t.Fatalf("DocLen = %d, Tokenize gave %d tokens", ix.DocLen(0), len(got))
		}
		for _, tok := range got {
			if hits := ix.Search(tok, 1, nil, nil); len(hits) != 1 {
				t.Fatalf("token %q of %q does not find its document", tok, s)
			}
		}
	})
}

// corpus is small enough to score by hand. Tokens:
//
//	0: pdf to markdown                        (|d| = 3)
//	1: convert pdf files pdf                  (|d| = 4; "a" is dropped)
//	2: write daily log entries in memory      (|d| = 6)
//
// N = 3, avgdl = 13/3.
var corpus = []string{
	"PDF to Markdown",
	"Convert a PDF: files, pdf",
	"Write daily-log entries in memory",
}

func build(docs []string) *Index {
	var b Builder
	for _, d := range docs {
		b.Add(d)
	}
	return b.Build()
}

func TestScoresMatchFormula(t *testing.T) {
	ix := build(corpus)
	// idf(pdf)      = ln((3 − 2 + 0.5)/(2 + 0.5) + 1) = ln(1.6)
	// idf(markdown) = ln((3 − 1 + 0.5)/(1 + 0.5) + 1) = ln(8/3)
	// score(pdf, d0) = ln(1.6) · 1 · 2.2 / (1 + 1.2 · (0.25 + 0.75 · 3 / (13/3)))
	// score(pdf, d1) = ln(1.6) · 2 · 2.2 / (2 + 1.2 · (0.25 + 0.75 · 4 / (13/3)))
	// (values below were computed independently of this package)
	type want struct {
		doc   int
		score float64
	}
	tests := []struct {
		query string
		want  []want
	}{
		{"pdf", []want{{1, 0.660545641102}, {0, 0.537684151857}}},
		{"PDF markdown", []want{{0, 1.659752817303}, {1, 0.660545641102}}},
		{"daily memory pdf", []want{{2, 1.694967772576}, {1, 0.660545641102}, {0, 0.537684151857}}},
		{"pdf pdf pdf markdown", []want{{0, 1.659752817303}, {1, 0.660545641102}}}, // duplicates count once
		{"nothing here", nil},
		{"a", nil}, // a one-character query has no terms
		{"", nil},
	}
	for _, tt := range tests {
		hits := ix.Search(tt.query, 0, nil, nil)
		if len(hits) != len(tt.want) {
			t.Errorf("Search(%q) = %v, want %v", tt.query, hits, tt.want)
			continue
		}
		for i, w := range tt.want {
			if hits[i].Doc != w.doc || math.Abs(hits[i].Score-w.score) > 1e-6 {
				t.Errorf("Search(%q)[%d] = %+v, want doc %d score %.9f", tt.query, i, hits[i], w.doc, w.score)
			}
		}
	}
	if idf, ok := ix.IDF("pdf"); !ok || math.Abs(idf-math.Log(1.6)) > 1e-12 {
		t.Errorf("IDF(pdf) = %v, %v; want ln 1.6", idf, ok)
	}
	if got := ix.AvgDocLen(); math.Abs(got-13.0/3) > 1e-12 {
		t.Errorf("AvgDocLen = %v, want 13/3", got)
	}
}

func TestDuplicateQueryWordsCountOnce(t *testing.T) {
	ix := build(corpus)
	once := ix.Search("markdown pdf", 0, nil, nil)
	many := ix.Search("pdf markdown PDF Pdf markdown", 0, nil, nil)
	if !slices.Equal(once, many) {
		t.Errorf("repeated words changed the result: %v vs %v", many, once)
	}
}

func TestTopKAndTies(t *testing.T) {
	// Ten identical documents tie; the lowest ids win, in order.
	docs := make([]string, 10)
	for i := range docs {
		docs[i] = "same words here"
	}
	docs = append(docs, "words words words words") // 10: the best
	ix := build(docs)
	hits := ix.Search("words", 4, nil, nil)
	ids := make([]int, len(hits))
	for i, h := range hits {
		ids[i] = h.Doc
	}
	if want := []int{10, 0, 1, 2}; !slices.Equal(ids, want) {
		t.Errorf("top 4 = %v, want %v", ids, want)
	}
	for i := 2; i < len(hits); i++ {
		if hits[i].Score != hits[1].Score {
			t.Errorf("identical documents scored differently: %v", hits)
		}
	}
}

// TestTopIsTheSortedPrefix: for every k and filter, Search and
// SearchTerms return exactly the first k of all the allowed hits sorted
// by score then id, and ask the filter at most once per document.
func TestTopIsTheSortedPrefix(t *testing.T) {
	ix := build(syntheticDocs(2000))
	queries := []string{"convert markdown files to pdf", "daemon", "git commit branch review", "zeppelin", "test test build"}
	filters := map[string]func(int) bool{"none": nil, "even": func(d int) bool { return d%2 == 0 }, "rare": func(d int) bool { return d%97 == 3 }}
	for _, q := range queries {
		terms := slices.Compact(Tokenize(q))
		for name, filter := range filters {
			all := ix.SearchTerms(terms, nil, 0, nil, nil)
			var want []Hit
			for _, h := range all {
				if filter == nil || filter(h.Doc) {
					want = append(want, h)
				}
			}
			if !slices.IsSortedFunc(want, func(a, b Hit) int {
				if better(a, b) {
					return -1
				}
				return 1
			}) {
				t.Fatalf("%q: all hits not sorted best first", q)
			}
			for _, k := range []int{0, 1, 3, 10, 50, len(want) + 5} {
				asked := map[int]int{}
				counting := filter
				if filter != nil {
					counting = func(d int) bool { asked[d]++; return filter(d) }
				}
				got := ix.Search(q, k, nil, counting)
				n := len(want)
				if k > 0 && k < n {
					n = k
				}
				if !slices.Equal(got, want[:n]) {
					t.Errorf("%q, filter %s, k=%d: got %v, want %v", q, name, k, got, want[:n])
				}
				if got := ix.SearchTerms(terms, nil, k, nil, counting); !slices.Equal(got, want[:n]) {
					t.Errorf("SearchTerms %q, filter %s, k=%d: got %v, want %v", q, name, k, got, want[:n])
				}
				for d, c := range asked {
					if c > 2 { // once by Search, once by SearchTerms
						t.Errorf("%q: filter asked %d times about document %d", q, c, d)
					}
				}
			}
		}
	}
}

func TestFilter(t *testing.T) {
	ix := build(corpus)
	calls := 0
	hits := ix.Search("pdf memory", 0, nil, func(doc int) bool { calls++; return doc != 1 })
	if len(hits) != 2 || hits[0].Doc != 2 || hits[1].Doc != 0 {
		t.Errorf("filtered hits = %v, want docs 2 and 0", hits)
	}
	if calls != 3 {
		t.Errorf("filter called %d times, want once per matching document (3)", calls)
	}
	// The scratch accumulators were reset even for filtered documents.
	if hits := ix.Search("convert", 0, nil, nil); len(hits) != 1 || hits[0].Doc != 1 || math.Abs(hits[0].Score-ix.Search("convert", 0, nil, nil)[0].Score) > 0 {
		t.Errorf("accumulators leaked between queries: %v", hits)
	}
}

func TestEmptyIndexAndEmptyDocuments(t *testing.T) {
	var b Builder
	if hits := b.Build().Search("anything", 5, nil, nil); len(hits) != 0 {
		t.Errorf("empty index returned %v", hits)
	}
	b.Add("")
	b.Add("x y z")
	b.Add("real words")
	ix := b.Build()
	if ix.Len() != 3 || ix.DocLen(0) != 0 || ix.DocLen(1) != 0 {
		t.Errorf("Len %d, DocLen %d %d; want 3, 0, 0", ix.Len(), ix.DocLen(0), ix.DocLen(1))
	}
	if hits := ix.Search("real", 5, nil, nil); len(hits) != 1 || hits[0].Doc != 2 {
		t.Errorf("Search(real) = %v", hits)
	}
}

func TestSearchDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under -race")
	}
	ix := build(syntheticDocs(1000))
	dst := make([]Hit, 0, 5)
	allow := func(doc int) bool { return doc%2 == 0 }
	ix.Search("convert markdown files", 5, dst, allow) // warm the pool
	allocs := testing.AllocsPerRun(100, func() {
		dst = ix.Search("convert markdown files into pdf", 5, dst, allow)
	})
	if allocs != 0 {
		t.Errorf("Search allocated %.1f times per query, want 0", allocs)
	}
	if len(dst) != 5 {
		t.Errorf("got %d hits, want 5", len(dst))
	}
}

var vocabulary = strings.Fields(`convert markdown pdf files write daily log memory entries skill search
index git commit branch review deploy agent prompt budget truncate token user room chat daemon editor
language server vector embed chunk hybrid rank score query test build release docker image python
shell script format lint check yaml json csv table chart plot email calendar meeting notes summary`)

// syntheticDocs returns n skill-like descriptions of 12–30 words.
func syntheticDocs(n int) []string {
	docs := make([]string, n)
	seed := uint32(1)
	next := func() int { seed = seed*1664525 + 1013904223; return int(seed >> 8) }
	for i := range docs {
		var sb strings.Builder
		fmt.Fprintf(&sb, "skill-%04d ", i)
		words := 12 + next()%19
		for w := 0; w < words; w++ {
			sb.WriteString(vocabulary[next()%len(vocabulary)])
			sb.WriteByte(' ')
		}
		docs[i] = sb.String()
	}
	return docs
}

func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{100, 1000, 100000} {
		ix := build(syntheticDocs(n))
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			dst := make([]Hit, 0, 5)
			b.ReportAllocs()
			for b.Loop() {
				dst = ix.Search("convert markdown files to pdf", 5, dst, nil)
			}
		})
	}
	// With a filter, and through SearchTerms as the memory store calls it
	// (a scope filter, one term not selecting, 24 candidates).
	ix := build(syntheticDocs(100000))
	even := func(doc int) bool { return doc%2 == 0 }
	b.Run("docs=100000/filter", func(b *testing.B) {
		dst := make([]Hit, 0, 5)
		b.ReportAllocs()
		for b.Loop() {
			dst = ix.Search("convert markdown files to pdf", 5, dst, even)
		}
	})
	b.Run("docs=100000/terms", func(b *testing.B) {
		terms := []string{"convert", "markdown", "files", "pdf"}
		selecting := []bool{true, true, false, true}
		dst := make([]Hit, 0, 24)
		b.ReportAllocs()
		for b.Loop() {
			dst = ix.SearchTerms(terms, selecting, 24, dst, even)
		}
	})
}

func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		docs := syntheticDocs(n)
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				build(docs)
			}
		})
	}
}

func TestBuilderReuse(t *testing.T) {
	var b Builder
	for _, d := range corpus {
		b.Add(d)
	}
	first := b.Build()
	if id := b.Add("pdf pdf pdf"); id != 3 {
		t.Fatalf("fourth document got id %d", id)
	}
	second := b.Build()
	if first.Len() != 3 || second.Len() != 4 {
		t.Fatalf("Len = %d, %d; want 3, 4", first.Len(), second.Len())
	}
	if hits := first.Search("pdf", 0, nil, nil); len(hits) != 2 || math.Abs(hits[0].Score-0.660545641102) > 1e-6 {
		t.Errorf("the first index changed after more documents were added: %v", hits)
	}
	if hits := second.Search("pdf", 0, nil, nil); len(hits) != 3 || hits[0].Doc != 3 {
		t.Errorf("second index: %v", hits)
	}
}

// SearchTerms: only documents holding a selecting term are hits, every
// query term adds to their score, and Score gives the same sums.
func TestSearchTermsSelecting(t *testing.T) {
	var b Builder
	b.Add("printer toner printer")    // 0
	b.Add("the printer on floor two") // 1
	b.Add("the toner")                // 2
	b.Add("the the the")              // 3
	ix := b.Build()
	terms := []string{"the", "toner", "printer"}
	if ix.DF("the") != 3 || ix.DF("toner") != 2 || ix.DF("zeppelin") != 0 {
		t.Fatalf("DF: %d %d %d", ix.DF("the"), ix.DF("toner"), ix.DF("zeppelin"))
	}
	all := ix.SearchTerms(terms, nil, 0, nil, nil)
	if len(all) != 4 {
		t.Fatalf("every term selecting: %d hits, want 4", len(all))
	}
	sel := ix.SearchTerms(terms, []bool{false, true, false}, 0, nil, nil)
	if len(sel) != 2 || sel[0].Doc != 0 && sel[0].Doc != 2 {
		t.Fatalf("toner selecting: %+v; want documents 0 and 2", sel)
	}
	for _, h := range append(all, sel...) {
		if got := ix.Score(terms, h.Doc); got != h.Score {
			t.Errorf("Score(doc %d) = %v, SearchTerms said %v", h.Doc, got, h.Score)
		}
	}
	if ix.Score(terms, 3) <= 0 || ix.Score([]string{"zeppelin"}, 0) != 0 {
		t.Error("Score of a document without the terms")
	}
}

// SearchTerms looks a few selected documents up in a long posting list
// (a frequent term that does not select) and must score them exactly as
// walking the list does: Score is the walk's reference.
func TestSearchTermsLookup(t *testing.T) {
	var b Builder
	for i := range 2000 {
		text := "common filler"
		if i%7 == 0 {
			text += " common"
		}
		if i%400 == 3 || i%400 == 10 {
			text += " rare"
		}
		b.Add(text)
	}
	ix := b.Build()
	terms := []string{"common", "rare", "filler"}
	hits := ix.SearchTerms(terms, []bool{false, true, false}, 0, nil, nil)
	if len(hits) != 10 || ix.DF("common") <= lookupFactor*len(hits) {
		t.Fatalf("%d hits of df %d: the lookup path is not taken", len(hits), ix.DF("common"))
	}
	for _, h := range hits {
		if got := ix.Score(terms, h.Doc); got != h.Score {
			t.Errorf("doc %d: SearchTerms %v, Score %v", h.Doc, h.Score, got)
		}
	}
}
