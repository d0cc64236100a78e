package memory

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Period is the span of days a query names, first and last day included
// (dates at midnight UTC).
type Period struct {
	From, To time.Time
}

// Days returns the days of p, in order.
func (p Period) Days() []time.Time {
	var out []time.Time
	for d := p.From; !d.After(p.To); d = d.AddDate(0, 0, 1) {
		out = append(out, d)
	}
	return out
}

// Windowed returns p widened on each side: by windowDays for a period of
// up to a week, by twice that for a longer one. What a query dates is
// often written down a few days off (a weekend told on Monday, "last
// month" at the start of this one).
func (p Period) Windowed() Period {
	pad := windowDays
	if p.To.Sub(p.From) >= 7*24*time.Hour {
		pad *= 2
	}
	return Period{p.From.AddDate(0, 0, -pad), p.To.AddDate(0, 0, pad)}
}

const (
	// windowDays is how far around a named day or week daily logs
	// still match (Period.Windowed).
	windowDays = 3
	// maxPeriodDays bounds the periods a query is matched to: a longer
	// one ("in 2023") is left to the date words (the year).
	maxPeriodDays = 31
)

var (
	months  = "january|february|march|april|may|june|july|august|september|october|november|december"
	isoDate = regexp.MustCompile(`\b(\d{4})-(\d{2})-(\d{2})\b`)
	// "8 May 2023", "8th of May, 2023", "May 8, 2023", "May 8th 2023".
	dayMonthYear = regexp.MustCompile(`\b(\d{1,2})(?:st|nd|rd|th)?(?: of)? (` + months + `),? (\d{4})\b`)
	monthDayYear = regexp.MustCompile(`\b(` + months + `) (\d{1,2})(?:st|nd|rd|th)?,? ?(\d{4})\b`)
	monthYear    = regexp.MustCompile(`\b(` + months + `),? (\d{4})\b`)
	agoPhrase    = regexp.MustCompile(`\b(\d+|an?|one|two|three|four|five|six|a few|a couple of) (day|week|month)s? ago\b`)
	lastWeekday  = regexp.MustCompile(`\b(?:last|on|this past) (monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b`)
	shift        = regexp.MustCompile(`\b(?:the )?(day|week) (before|after)\b`)
)

// QueryPeriod returns the period a query names, read against now (the
// time the query speaks from): an explicit day ("2023-05-08", "8 May
// 2023", "May 8th, 2023"), a month of a year ("in May 2023"), or a day
// or period relative to now ("yesterday", "last weekend", "last week",
// "three days ago", "last Friday"); "the day before" or "the week after"
// moves it. A month without a year, a year alone and anything longer
// than maxPeriodDays name no period (the date words indexed with each
// daily log match those).
func QueryPeriod(text string, now time.Time) (Period, bool) {
	s := strings.ToLower(text)
	today := dayOf(now)
	p, ok := absolutePeriod(s)
	if !ok {
		p, ok = relativePeriod(s, today)
	}
	if !ok || p.To.Before(p.From) || p.To.Sub(p.From) > maxPeriodDays*24*time.Hour {
		return Period{}, false
	}
	if m := shift.FindStringSubmatch(strings.ReplaceAll(s, "day before yesterday", "")); m != nil {
		p = shifted(p, m[1], m[2] == "before")
	}
	return p, true
}

// shifted moves p by "the day before/after" (one day) or "the week
// before/after" (the seven days before its first or after its last day).
func shifted(p Period, unit string, before bool) Period {
	switch {
	case unit == "day" && before:
		return Period{p.From.AddDate(0, 0, -1), p.To.AddDate(0, 0, -1)}
	case unit == "day":
		return Period{p.From.AddDate(0, 0, 1), p.To.AddDate(0, 0, 1)}
	case before:
		return Period{p.From.AddDate(0, 0, -7), p.From.AddDate(0, 0, -1)}
	}
	return Period{p.To.AddDate(0, 0, 1), p.To.AddDate(0, 0, 7)}
}

// dayOf returns t's calendar day, at midnight UTC.
func dayOf(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// absolutePeriod reads a dated day or a month of a year: the first one
// in s (by kind: ISO, day month year, month day year, month year).
func absolutePeriod(s string) (Period, bool) {
	if !strings.ContainsAny(s, "0123456789") {
		return Period{}, false // every form has a year
	}
	if m := isoDate.FindStringSubmatch(s); m != nil {
		return dayPeriod(atoi(m[1]), monthOf(m[2]), atoi(m[3]))
	}
	if m := dayMonthYear.FindStringSubmatch(s); m != nil {
		return dayPeriod(atoi(m[3]), monthOf(m[2]), atoi(m[1]))
	}
	if m := monthDayYear.FindStringSubmatch(s); m != nil {
		return dayPeriod(atoi(m[3]), monthOf(m[1]), atoi(m[2]))
	}
	if m := monthYear.FindStringSubmatch(s); m != nil {
		from := time.Date(atoi(m[2]), monthOf(m[1]), 1, 0, 0, 0, 0, time.UTC)
		return Period{from, from.AddDate(0, 1, -1)}, true
	}
	return Period{}, false
}

// dayPeriod is the day y-m-d, if it is one (not 31 February).
func dayPeriod(y int, m time.Month, d int) (Period, bool) {
	t := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	if m < time.January || m > time.December || t.Day() != d {
		return Period{}, false
	}
	return Period{t, t}, true
}

// relativePeriod reads a period relative to today.
func relativePeriod(s string, today time.Time) (Period, bool) {
	day := func(n int) (Period, bool) { t := today.AddDate(0, 0, n); return Period{t, t}, true }
	switch {
	case strings.Contains(s, "day before yesterday"):
		return day(-2)
	case strings.Contains(s, "yesterday"), strings.Contains(s, "last night"):
		return day(-1)
	case strings.Contains(s, "tomorrow"):
		return day(1)
	case strings.Contains(s, "today"), strings.Contains(s, "tonight"), strings.Contains(s, "this morning"):
		return day(0)
	case strings.Contains(s, "last weekend"), strings.Contains(s, "past weekend"):
		// The Saturday and Sunday before the last Sunday before today.
		back := int(today.Weekday())
		if back == 0 {
			back = 7
		}
		sun := today.AddDate(0, 0, -back)
		return Period{sun.AddDate(0, 0, -1), sun}, true
	case strings.Contains(s, "this weekend"):
		sat := today.AddDate(0, 0, (int(time.Saturday)-int(today.Weekday())+7)%7)
		return Period{sat, sat.AddDate(0, 0, 1)}, true
	case strings.Contains(s, "last week"), strings.Contains(s, "past week"):
		mon := weekStart(today).AddDate(0, 0, -7)
		return Period{mon, mon.AddDate(0, 0, 6)}, true
	case strings.Contains(s, "this week"):
		return Period{weekStart(today), today}, true
	case strings.Contains(s, "last month"), strings.Contains(s, "past month"):
		first := today.AddDate(0, 0, 1-today.Day()).AddDate(0, -1, 0)
		return Period{first, first.AddDate(0, 1, -1)}, true
	}
	if !strings.Contains(s, "ago") && !strings.Contains(s, "day") {
		return Period{}, false // the regular expressions below cost more than the rest
	}
	if m := agoPhrase.FindStringSubmatch(s); m != nil {
		return agoPeriod(m[1], m[2], today)
	}
	if m := lastWeekday.FindStringSubmatch(s); m != nil {
		back := (int(today.Weekday()) - weekdayOf(m[1]) + 7) % 7
		if back == 0 {
			back = 7
		}
		return day(-back)
	}
	return Period{}, false
}

// agoPeriod is "n units ago": that day, or for "a few"/"a couple of",
// the days two to four units back.
func agoPeriod(count, unit string, today time.Time) (Period, bool) {
	days := map[string]int{"day": 1, "week": 7, "month": 30}[unit]
	n := map[string]int{"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}[count]
	switch {
	case count == "a few" || count == "a couple of":
		return Period{today.AddDate(0, 0, -4*days), today.AddDate(0, 0, -2*days)}, true
	case n == 0:
		n = atoi(count)
	}
	if n <= 0 || n*days > 400 {
		return Period{}, false
	}
	t := today.AddDate(0, 0, -n*days)
	return Period{t, t}, true
}

// weekStart returns the Monday of t's week.
func weekStart(t time.Time) time.Time {
	return t.AddDate(0, 0, -((int(t.Weekday()) + 6) % 7))
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func monthOf(s string) time.Month {
	if n := atoi(s); n > 0 {
		return time.Month(n)
	}
	for i, name := range strings.Split(months, "|") {
		if name == s {
			return time.Month(i + 1)
		}
	}
	return 0
}

func weekdayOf(s string) int {
	for d := time.Sunday; d <= time.Saturday; d++ {
		if strings.EqualFold(d.String(), s) {
			return int(d)
		}
	}
	return 0
}

// DayTerm is the full-text term of a daily log's day (IndexText adds it
// to each chunk of the log; a query naming a period adds the terms of
// its days): "20230508", a token no prose holds.
func DayTerm(d time.Time) string { return d.Format("20060102") }

// QueryTerms returns the full-text terms of q for an analyzer a: the
// terms of its text (Analyzer.Query) and, when the text names a period
// (QueryPeriod, against q.Now or else the clock), the day terms of the
// period's window, so the daily logs of those days are candidates and
// score as if they held one more query word.
func QueryTerms(a *Analyzer, q Query) []string {
	terms := a.Query(q.Text)
	now := q.Now
	if now.IsZero() {
		now = time.Now()
	}
	if p, ok := QueryPeriod(q.Text, now); ok {
		for _, d := range p.Windowed().Days() {
			terms = append(terms, DayTerm(d))
		}
	}
	return terms
}
