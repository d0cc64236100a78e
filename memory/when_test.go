package memory

import (
	"slices"
	"testing"
	"time"
)

func TestQueryPeriod(t *testing.T) {
	// Wednesday 10 May 2023, evening.
	now := time.Date(2023, 5, 10, 21, 30, 0, 0, time.UTC)
	tests := []struct {
		query    string
		from, to string // "" = no period
	}{
		{"what did we do yesterday", "2023-05-09", "2023-05-09"},
		{"the day before yesterday", "2023-05-08", "2023-05-08"},
		{"plans for today?", "2023-05-10", "2023-05-10"},
		{"what did Ana do last weekend", "2023-05-06", "2023-05-07"},
		{"this weekend's hike", "2023-05-13", "2023-05-14"},
		{"books read last week", "2023-05-01", "2023-05-07"},
		{"bills paid last month", "2023-04-01", "2023-04-30"},
		{"the dentist three days ago", "2023-05-07", "2023-05-07"},
		{"a week ago", "2023-05-03", "2023-05-03"},
		{"a few days ago", "2023-05-06", "2023-05-08"},
		{"last Friday's meeting", "2023-05-05", "2023-05-05"},
		{"on Wednesday", "2023-05-03", "2023-05-03"},
		{"what happened on 2023-02-14", "2023-02-14", "2023-02-14"},
		{"what did Gina find on 1 February, 2023?", "2023-02-01", "2023-02-01"},
		{"what did Tim read on 8th of December 2023", "2023-12-08", "2023-12-08"},
		{"accepted for on May 23, 2023?", "2023-05-23", "2023-05-23"},
		{"what did she paint in July 2023", "2023-07-01", "2023-07-31"},
		{"where was he the day before 16 November 2023", "2023-11-15", "2023-11-15"},
		{"where was he in the week before 16 November 2023", "2023-11-09", "2023-11-15"},
		{"the day after yesterday's storm", "2023-05-10", "2023-05-10"},
		{"camping in June", "", ""},
		{"beach trips in 2023", "", ""},
		{"on 31 February 2023", "", ""},
		{"what is her favourite colour", "", ""},
		{"1000 days ago", "", ""},
	}
	for _, tt := range tests {
		p, ok := QueryPeriod(tt.query, now)
		if ok != (tt.from != "") {
			t.Errorf("%q: period %v, %v; want %s..%s", tt.query, p, ok, tt.from, tt.to)
			continue
		}
		if ok && (p.From.Format(time.DateOnly) != tt.from || p.To.Format(time.DateOnly) != tt.to) {
			t.Errorf("%q: %s..%s, want %s..%s", tt.query, p.From.Format(time.DateOnly), p.To.Format(time.DateOnly), tt.from, tt.to)
		}
	}
}

func TestQueryTermsAddWindowDays(t *testing.T) {
	var a Analyzer
	now := time.Date(2023, 5, 10, 12, 0, 0, 0, time.UTC)
	got := QueryTerms(&a, Query{Text: "where did we eat yesterday", Now: now})
	want := []string{"eat", "yesterday", "20230506", "20230507", "20230508", "20230509", "20230510", "20230511", "20230512"}
	if !slices.Equal(got, want) {
		t.Errorf("terms %q, want %q", got, want)
	}
	month := QueryTerms(&a, Query{Text: "in May 2023", Now: now})
	if n := len(month) - len(a.Query("in May 2023")); n != 31+2*2*windowDays {
		t.Errorf("a month adds %d day terms, want %d", n, 31+4*windowDays)
	}
	if got := QueryTerms(&a, Query{Text: "favourite colour", Now: now}); !slices.Equal(got, a.Query("favourite colour")) {
		t.Errorf("a query naming no day got %q", got)
	}
}

func TestDateWordsHoldDayTerm(t *testing.T) {
	var a Analyzer
	terms := a.Terms(DateWords("memory/2023-05-08.md"))
	if !slices.Contains(terms, "20230508") {
		t.Errorf("date words' terms %q lack the day term", terms)
	}
}

// BenchmarkQueryTerms is the cost the period reading adds to a query's
// terms: a question naming no day, and one naming a month.
func BenchmarkQueryTerms(b *testing.B) {
	var a Analyzer
	now := time.Date(2023, 5, 10, 12, 0, 0, 0, time.UTC)
	for _, text := range []string{"What did Caroline research for her adoption plans?", "What did Melanie paint in July 2023?"} {
		b.Run(text[:9], func(b *testing.B) {
			for b.Loop() {
				QueryTerms(&a, Query{Text: text, Now: now})
			}
		})
		b.Run(text[:9]+"/analyzer-only", func(b *testing.B) {
			for b.Loop() {
				a.Query(text)
			}
		})
	}
}
