package prompt

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/quirehq/quire/workspace"
)

var markerRE = regexp.MustCompile(`^\[\.\.\.truncated, read (.+) for full content\.\.\.\]\n\((.+): kept ([0-9,]+) \+ ([0-9,]+) of ([0-9,]+) chars\)\n`)

func parseGrouped(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
	if err != nil {
		t.Fatalf("marker number %q: %v", s, err)
	}
	return n
}

// checkTruncation asserts every promise Truncate makes about out.
func checkTruncation(t *testing.T, name, content string, limit int, out string, tr Truncation) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("result is not valid UTF-8: %q", out)
	}
	n := utf8.RuneCountInString(out)
	if n > limit {
		t.Fatalf("result has %d chars, over the limit %d", n, limit)
	}
	if n != tr.ResultChars {
		t.Fatalf("ResultChars = %d, result has %d chars", tr.ResultChars, n)
	}
	orig := content
	if !utf8.ValidString(content) {
		orig, _ = replaceInvalid([]byte(content))
	}
	if !tr.Truncated {
		if out != orig {
			t.Fatalf("a text within the limit must be kept whole")
		}
		return
	}
	if tr.Dropped {
		if out != "" {
			t.Fatalf("dropped, yet result is %q", out)
		}
		return
	}
	if tr.HeadEnd < 0 || tr.HeadEnd > tr.TailStart || tr.TailStart > int64(len(orig)) {
		t.Fatalf("bad offsets HeadEnd %d TailStart %d for %d bytes", tr.HeadEnd, tr.TailStart, len(orig))
	}
	head, tail := orig[:tr.HeadEnd], orig[tr.TailStart:]
	if !strings.HasPrefix(out, head) {
		t.Fatalf("the result does not start with the head, a prefix of the original")
	}
	if !strings.HasSuffix(out, tail) {
		t.Fatalf("the result does not end with the tail, a suffix of the original")
	}
	mid := out[len(head) : len(out)-len(tail)]
	if head != "" && !strings.HasSuffix(head, "\n") {
		if !strings.HasPrefix(mid, "\n") {
			t.Fatalf("no line break between head and marker")
		}
		mid = mid[1:]
	}
	m := markerRE.FindStringSubmatch(mid)
	if m == nil || m[0] != mid {
		t.Fatalf("between head and tail there must be exactly the marker, got %q", mid)
	}
	if m[1] != name || m[2] != name {
		t.Fatalf("marker names %q and %q, want %q", m[1], m[2], name)
	}
	keptHead, keptTail, total := parseGrouped(t, m[3]), parseGrouped(t, m[4]), parseGrouped(t, m[5])
	if keptHead != utf8.RuneCountInString(head) || keptHead != tr.HeadChars {
		t.Fatalf("marker says head %d, head has %d chars, report says %d", keptHead, utf8.RuneCountInString(head), tr.HeadChars)
	}
	if keptTail != utf8.RuneCountInString(tail) || keptTail != tr.TailChars {
		t.Fatalf("marker says tail %d, tail has %d chars, report says %d", keptTail, utf8.RuneCountInString(tail), tr.TailChars)
	}
	if total != utf8.RuneCountInString(orig) {
		t.Fatalf("marker says total %d, original has %d chars", total, utf8.RuneCountInString(orig))
	}
}

func TestTruncateTable(t *testing.T) {
	lines := func(n int, line string) string { return strings.Repeat(line+"\n", n) }
	tests := []struct {
		name      string
		content   string
		limit     int
		truncated bool
		dropped   bool
	}{
		{"fits", "hello\n", 100, false, false},
		{"exactly the limit", strings.Repeat("a", 100), 100, false, false},
		{"one over", strings.Repeat("a", 101), 100, true, false},
		{"lines", lines(500, "the quick brown fox"), 2000, true, false},
		{"multi-byte", strings.Repeat("é日本🐟", 1000), 1000, true, false},
		{"no newlines", strings.Repeat("x", 50000), 20000, true, false},
		{"limit below the marker", strings.Repeat("a", 1000), 40, true, true},
		{"crlf", lines(300, "windows line\r"), 1000, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, tr := Truncate("SOUL.md", tc.content, tc.limit, 0.7, 0.2)
			if tr.Truncated != tc.truncated || tr.Dropped != tc.dropped {
				t.Fatalf("Truncated=%v Dropped=%v, want %v %v", tr.Truncated, tr.Dropped, tc.truncated, tc.dropped)
			}
			checkTruncation(t, "SOUL.md", tc.content, tc.limit, out, tr)
		})
	}
}

// The marker of behavior.md §3: "[...truncated, read SOUL.md for full
// content...]" and a line stating exactly what was kept.
func TestTruncateMarkerText(t *testing.T) {
	content := strings.Repeat("x", 25000)
	out, tr := Truncate("SOUL.md", content, 20000, 0.7, 0.2)
	want := fmt.Sprintf("[...truncated, read SOUL.md for full content...]\n(SOUL.md: kept %s + %s of 25,000 chars)\n",
		GroupThousands(tr.HeadChars), GroupThousands(tr.TailChars))
	if !strings.Contains(out, want) {
		t.Fatalf("result lacks %q", want)
	}
	if tr.HeadChars != 14000 || tr.TailChars != 4000 {
		t.Fatalf("kept %d + %d; want the 70 %%/20 %% split 14,000 + 4,000 when there are no lines to align to", tr.HeadChars, tr.TailChars)
	}
}

func TestTruncateMovesCutsToLineBoundaries(t *testing.T) {
	// Lines of 100 chars: every cut has a line boundary within 200 chars.
	content := strings.Repeat(strings.Repeat("a", 99)+"\n", 300)
	out, tr := Truncate("AGENTS.md", content, 10000, 0.7, 0.2)
	checkTruncation(t, "AGENTS.md", content, 10000, out, tr)
	if tr.HeadEnd%100 != 0 || tr.TailStart%100 != 0 {
		t.Fatalf("cuts at %d and %d are not at line starts", tr.HeadEnd, tr.TailStart)
	}
	if tr.HeadChars > 7000 || tr.HeadChars < 6800 || tr.TailChars > 2000 || tr.TailChars < 1800 {
		t.Fatalf("kept %d + %d; the cuts may only move up to 200 chars inward", tr.HeadChars, tr.TailChars)
	}
	// A line longer than 200 chars around the cut: cut mid-line.
	long := strings.Repeat("b", 30000)
	_, tr = Truncate("AGENTS.md", long, 10000, 0.7, 0.2)
	if tr.HeadChars != 7000 {
		t.Fatalf("with no line boundary near, the head cut stays at 7,000, got %d", tr.HeadChars)
	}
}

// GoClaw defect: cutting bytes splits multi-byte characters.
func TestDefectByteCutsSplitCharacters(t *testing.T) {
	content := strings.Repeat("日本語🐟é", 3000) // 3-, 4- and 2-byte characters, no newlines
	for limit := 100; limit < 5000; limit += 37 {
		out, tr := Truncate("SOUL.md", content, limit, 0.7, 0.2)
		if !utf8.ValidString(out) {
			t.Fatalf("limit %d: result is not valid UTF-8", limit)
		}
		if n := utf8.RuneCountInString(out); n > limit {
			t.Fatalf("limit %d counts code points, but the result has %d", limit, n)
		}
		checkTruncation(t, "SOUL.md", content, limit, out, tr)
	}
}

// GoClaw defect: the clamp appends "…" and overshoots the total budget,
// which then drops every later file.
func TestDefectClampOvershoot(t *testing.T) {
	w := openMap(t, map[string]string{
		"AGENTS.md": strings.Repeat("a", 15000),
		"SOUL.md":   strings.Repeat("s\n", 10000),
		"TOOLS.md":  "tools",
	}, "budget: {per_file: 20000, total: 24000}\n")
	rep := assemble(t, w, Request{}).Report
	soul, _ := rep.File(workspace.SoulFile)
	if soul.Status != StatusClamped {
		t.Fatalf("SOUL.md status %s, want clamped", soul.Status)
	}
	if rep.InjectedChars > 24000 {
		t.Fatalf("injected %d chars, over the total of 24,000", rep.InjectedChars)
	}
	if soul.InjectedChars > soul.LimitChars || soul.LimitChars != 24000-15000 {
		t.Fatalf("SOUL.md injected %d chars with limit %d; the clamp limit must be what is left (9,000)", soul.InjectedChars, soul.LimitChars)
	}
	if strings.Contains(assemble(t, w, Request{}).Prompt, "…") {
		t.Fatalf("the clamp must re-truncate with a true marker, not append an ellipsis")
	}
}

// GoClaw defect: the marker can claim more than was kept.
func TestDefectLyingMarker(t *testing.T) {
	for _, limit := range []int{150, 300, 1000, 20000} {
		content := strings.Repeat("line of text é\n", 3000)
		out, tr := Truncate("SOUL.md", content, limit, 0.7, 0.2)
		checkTruncation(t, "SOUL.md", content, limit, out, tr) // parses the marker's numbers and compares
	}
}

// GoClaw defect: the marker is not charged to the per-file budget.
func TestDefectMarkerNotCharged(t *testing.T) {
	for _, limit := range []int{120, 500, 20000} {
		content := strings.Repeat("z", 3*limit)
		out, _ := Truncate("SOUL.md", content, limit, 0.7, 0.2)
		if n := utf8.RuneCountInString(out); n > limit {
			t.Fatalf("limit %d: result with marker has %d chars", limit, n)
		}
	}
}

func TestGroupThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 25000: "25,000", 1234567: "1,234,567", -5: "-5", -1234: "-1,234", -123456: "-123,456"} {
		if got := GroupThousands(n); got != want {
			t.Errorf("GroupThousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func FuzzTruncate(f *testing.F) {
	f.Add("hello\nworld\n", 8, uint8(70), uint8(20))
	f.Add(strings.Repeat("日本\n", 300), 200, uint8(70), uint8(20))
	f.Add("\xff\xfe invalid \xc3", 5, uint8(50), uint8(40))
	f.Fuzz(func(t *testing.T, content string, limit int, head, tail uint8) {
		if limit < 0 || limit > 1<<16 {
			return
		}
		hr, tr := float64(head%99+1)/100, float64(tail%99+1)/100
		if hr+tr >= 1 {
			return
		}
		out1, t1 := Truncate("F.md", content, limit, hr, tr)
		out2, t2 := Truncate("F.md", content, limit, hr, tr)
		if out1 != out2 || t1 != t2 {
			t.Fatalf("not deterministic")
		}
		checkTruncation(t, "F.md", content, limit, out1, t1)
	})
}

func TestCountChars(t *testing.T) {
	cases := []string{"", "a", "abcdefgh", "abcdefghi", "é", "日本語🐟é and more ascii text here", strings.Repeat("🐟x", 17), "\u0080\u07ff\u0800\uffff\U00010000"}
	for _, at := range []int{0, 7, 8, 31, 32, 33, 63, 64, 70, 127, 128} { // one non-ASCII character in or after a block of 64
		cases = append(cases, strings.Repeat("a", at)+"é"+strings.Repeat("b", 135-at), strings.Repeat("c", at)+"日"+strings.Repeat("d", 70))
	}
	cases = append(cases, strings.Repeat("a", 96), strings.Repeat("é", 50))
	for _, s := range cases {
		n, ascii := countChars(s)
		if n != utf8.RuneCountInString(s) || ascii != (n == len(s)) {
			t.Errorf("countChars(%q) = %d, %v; want %d", s, n, ascii, utf8.RuneCountInString(s))
		}
	}
}

func FuzzCountChars(f *testing.F) {
	f.Add("héllo wörld 🐟")
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		if n, ascii := countChars(s); n != utf8.RuneCountInString(s) || ascii != (n == len(s)) {
			t.Fatalf("countChars = %d, %v; want %d", n, ascii, utf8.RuneCountInString(s))
		}
	})
}

func TestCharOffsets(t *testing.T) {
	for _, s := range []string{"", "abc", "日本語🐟é and more ascii text here", strings.Repeat("🐟x日é", 13), strings.Repeat("é", 40),
		strings.Repeat("ascii ", 30) + "日本" + strings.Repeat("z", 70) + "é" + strings.Repeat("y", 130)} {
		runes := []rune(s)
		for n := 0; n <= len(runes)+2; n++ {
			k := min(n, len(runes))
			if got, want := charsToBytes(s, n, false), len(string(runes[:k])); got != want {
				t.Errorf("charsToBytes(%q, %d) = %d, want %d", s, n, got, want)
			}
			if got, want := charsFromEndToBytes(s, n, false), len(string(runes[len(runes)-k:])); got != want {
				t.Errorf("charsFromEndToBytes(%q, %d) = %d, want %d", s, n, got, want)
			}
		}
	}
}

func FuzzCharOffsets(f *testing.F) {
	f.Add(strings.Repeat("ascii ", 30)+"日本"+strings.Repeat("z", 70), 100)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if !utf8.ValidString(s) || n < 0 {
			return
		}
		runes := []rune(s)
		k := min(n, len(runes))
		if got, want := charsToBytes(s, n, false), len(string(runes[:k])); got != want {
			t.Errorf("charsToBytes(%q, %d) = %d, want %d", s, n, got, want)
		}
		if got, want := charsFromEndToBytes(s, n, false), len(string(runes[len(runes)-k:])); got != want {
			t.Errorf("charsFromEndToBytes(%q, %d) = %d, want %d", s, n, got, want)
		}
	})
}

func TestNeedsEscape(t *testing.T) {
	for _, s := range []string{"", "plain words", "a&b", "<x", "y>", `say "hi"`, "it's", "\x00\x1f?@[]", strings.Repeat("x", 300), strings.Repeat("x", 300) + "'", strings.Repeat("é", 200) + "&"} {
		want := strings.ContainsAny(s, `&<>"'`)
		if got := needsEscape(s); got != want {
			t.Errorf("needsEscape(%.20q…) = %v, want %v", s, got, want)
		}
	}
}

func TestGroupThousandsEdges(t *testing.T) {
	for n, want := range map[int]string{-999: "-999", -1000: "-1,000", 100000: "100,000", 999999: "999,999", 1000000: "1,000,000", math.MaxInt64: "9,223,372,036,854,775,807", math.MinInt64: "-9,223,372,036,854,775,808"} {
		if got := GroupThousands(n); got != want {
			t.Errorf("GroupThousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestSkillsReasonWording holds reason to the sentences it has always said.
func TestSkillsReasonWording(t *testing.T) {
	for _, d := range []skillsDecision{
		{inline: true, counted: 20, builtin: 3, tokens: 412},
		{inline: true, counted: 1, tokens: 3500},
		{counted: 21, builtin: 3, tokens: 500},
		{counted: 1, tokens: 3501},
		{counted: 0, builtin: 2, tokens: 12345},
	} {
		builtins := ""
		if d.builtin > 0 {
			builtins = fmt.Sprintf(" (+%d built-in, not counted)", d.builtin)
		}
		noun := "skills"
		if d.counted == 1 {
			noun = "skill"
		}
		counts := fmt.Sprintf("%d %s%s", d.counted, noun, builtins)
		var want string
		switch {
		case d.inline:
			want = fmt.Sprintf("listed inline: %s ≤ %d and ~%s est. tokens ≤ %s", counts, InlineSkillCount, GroupThousands(d.tokens), GroupThousands(InlineSkillTokens))
		case d.counted > InlineSkillCount:
			want = fmt.Sprintf("skill search: %s > %d", counts, InlineSkillCount)
		default:
			want = fmt.Sprintf("skill search: %s with ~%s est. tokens > %s", counts, GroupThousands(d.tokens), GroupThousands(InlineSkillTokens))
		}
		if got := d.reason(); got != want {
			t.Errorf("reason(%+v) = %q, want %q", d, got, want)
		}
	}
}

func FuzzEscScan(f *testing.F) {
	f.Add("Use when the guest asks about <topic> & more: \"quotes\" and 'single'.")
	f.Add("ünïcödé — 日本語 🐟 plain")
	f.Fuzz(func(t *testing.T, s string) {
		cont, special := escScan(s)
		want := 0
		for i := 0; i < len(s); i++ {
			if s[i]&0xC0 == 0x80 {
				want++
			}
		}
		if cont != want || special != strings.ContainsAny(s, `&<>"'`) {
			t.Fatalf("escScan(%q) = %d, %v; want %d, %v", s, cont, special, want, strings.ContainsAny(s, `&<>"'`))
		}
	})
}

// FuzzMarkerChars holds markerChars, which works the marker's length out,
// to the marker marker writes, and groupedLen to GroupThousands.
func FuzzMarkerChars(f *testing.F) {
	f.Add("SOUL.md", 14000, 4000, 25000)
	f.Add("日本.md", -1, 999, 1000)
	f.Add("\xff", math.MinInt, math.MaxInt, 0)
	f.Fuzz(func(t *testing.T, name string, h, tl, total int) {
		m := marker(name, h, tl, total)
		if n, _ := countChars(m); markerChars(name, h, tl, total) != n {
			t.Fatalf("markerChars(%q, %d, %d, %d) = %d, the marker has %d", name, h, tl, total, markerChars(name, h, tl, total), n)
		}
		if "\n"+m != markerLine(name, h, tl, total, true) {
			t.Fatalf("markerLine with a line break is not a line break and the marker")
		}
		for _, n := range []int{h, tl, total} {
			if groupedLen(n) != len(GroupThousands(n)) {
				t.Fatalf("groupedLen(%d) = %d, GroupThousands gives %q", n, groupedLen(n), GroupThousands(n))
			}
		}
	})
}
