package memory

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"unicode/utf8"
	"unsafe"
)

func TestHash(t *testing.T) {
	// sha256("abc") = ba7816bf8f01cfea414140de5dae2223 b00361a3...
	if got, want := Hash([]byte("abc")), "ba7816bf8f01cfea414140de5dae2223"; got != want {
		t.Fatalf("Hash(abc) = %s, want %s", got, want)
	}
}

func para(n int, c string) string { return strings.Repeat(c, n) }

func TestSplit(t *testing.T) {
	long := strings.Repeat("é", 2500) // 2,500 code points, 5,000 bytes
	tests := []struct {
		name string
		text string
		want []Span
	}{
		{"empty", "", nil},
		{"only blank lines", "\n  \n\t\n", nil},
		{"one line", "hello", []Span{{1, 1, "hello"}}},
		{"leading and trailing blanks trimmed", "\n\nhello\nworld\n\n\n", []Span{{3, 4, "hello\nworld"}}},
		{"short paragraphs stay together", "a1\n\nb2\n", []Span{{1, 3, "a1\n\nb2"}}},
		{"blank line ends a chunk of 500", para(500, "a") + "\n\n" + "bb", []Span{{1, 1, para(500, "a")}, {3, 3, "bb"}}},
		{"blank line does not end a chunk of 499", para(499, "a") + "\n\nbb", []Span{{1, 3, para(499, "a") + "\n\nbb"}}},
		{"full chunk ends before the line that overflows", para(600, "a") + "\n" + para(400, "b") + "\n" + "c",
			[]Span{{1, 1, para(600, "a")}, {2, 3, para(400, "b") + "\nc"}}},
		{"exactly 1000 with newline", para(499, "a") + "\n" + para(500, "b"), []Span{{1, 2, para(499, "a") + "\n" + para(500, "b")}}},
		{"long line cut on code points", "x\n" + long + "\ny", []Span{{1, 1, "x"}, {2, 2, long[:2000]}, {2, 2, long[2000:4000]}, {2, 2, long[4000:]}, {3, 3, "y"}}},
		{"CRLF", "a\r\nb\r\n", []Span{{1, 2, "a\nb"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Split(tt.text)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d spans %+v, want %d", len(got), got, len(tt.want))
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("span %d = {%d %d %.40q}, want {%d %d %.40q}", i, got[i].StartLine, got[i].EndLine, got[i].Text, tt.want[i].StartLine, tt.want[i].EndLine, tt.want[i].Text)
				}
			}
		})
	}
}

// GoClaw's chunker could report line numbers that point at blank lines.
func TestSplitLineNumbersNeverPointAtBlankLines(t *testing.T) {
	text := "\n\n# Title\n\n" + para(520, "a") + "\n\n\n\n" + "second\n\n\n"
	lines := strings.Split(text, "\n")
	spans := Split(text)
	if len(spans) != 2 {
		t.Fatalf("got %d spans, want 2: %+v", len(spans), spans)
	}
	for _, s := range spans {
		for _, n := range []int{s.StartLine, s.EndLine} {
			if isBlank(lines[n-1]) {
				t.Errorf("span %q: line %d is blank", s.Text, n)
			}
		}
	}
	if spans[0].StartLine != 3 || spans[0].EndLine != 5 || spans[1].StartLine != 9 || spans[1].EndLine != 9 {
		t.Errorf("spans = %d-%d, %d-%d; want 3-5, 9-9", spans[0].StartLine, spans[0].EndLine, spans[1].StartLine, spans[1].EndLine)
	}
}

// GoClaw's overlap chunking could emit the final chunk twice.
func TestSplitNeverDuplicatesTheFinalChunk(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 40; i++ {
		b.WriteString(para(90, string(rune('a'+i%26))) + "\n")
	}
	spans := Split(b.String())
	seen := map[int]bool{}
	for i, s := range spans {
		if seen[s.StartLine] {
			t.Errorf("two spans start at line %d", s.StartLine)
		}
		seen[s.StartLine] = true
		if i > 0 && s.StartLine <= spans[i-1].EndLine {
			t.Errorf("span %d (%d-%d) overlaps the previous one (%d-%d)", i, s.StartLine, s.EndLine, spans[i-1].StartLine, spans[i-1].EndLine)
		}
	}
	if last := spans[len(spans)-1]; last.EndLine != 40 {
		t.Errorf("last span ends at %d, want 40", last.EndLine)
	}
}

// checkSpans asserts the invariants every split must hold.
func checkSpans(t *testing.T, text string, spans []Span) {
	t.Helper()
	lines := strings.Split(text, "\n")
	prevEnd := 0
	nonBlankSeen := 0
	for i, s := range spans {
		if n := utf8.RuneCountInString(s.Text); n == 0 || n > MaxChunkChars {
			t.Fatalf("span %d has %d code points", i, n)
		}
		if isBlank(s.Text) {
			t.Fatalf("span %d is blank", i)
		}
		if s.StartLine < prevEnd || (s.StartLine == prevEnd && spans[i-1].StartLine != s.StartLine) || s.EndLine < s.StartLine {
			t.Fatalf("span %d lines %d-%d after %d", i, s.StartLine, s.EndLine, prevEnd)
		}
		if isBlank(lines[s.StartLine-1]) || isBlank(lines[s.EndLine-1]) {
			t.Fatalf("span %d (%d-%d) starts or ends on a blank line", i, s.StartLine, s.EndLine)
		}
		if !utf8.ValidString(s.Text) && utf8.ValidString(text) {
			t.Fatalf("span %d cut a code point", i)
		}
		prevEnd = s.EndLine
	}
	for _, l := range lines {
		if !isBlank(l) {
			nonBlankSeen++
		}
	}
	covered := 0
	for i, s := range spans {
		if i > 0 && spans[i-1].StartLine == s.StartLine {
			continue // pieces of one long line
		}
		for n := s.StartLine; n <= s.EndLine; n++ {
			if !isBlank(lines[n-1]) {
				covered++
			}
		}
	}
	if covered != nonBlankSeen {
		t.Fatalf("spans cover %d non-blank lines of %d", covered, nonBlankSeen)
	}
}

func TestSplitInvariants(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 300; i++ {
		b.WriteString(strings.Repeat("word ", i%37))
		b.WriteString("\n")
		if i%7 == 0 {
			b.WriteString("\n")
		}
		if i%101 == 0 {
			b.WriteString(strings.Repeat("ü", 1500) + "\n")
		}
	}
	checkSpans(t, b.String(), Split(b.String()))
}

func FuzzSplit(f *testing.F) {
	f.Add("hello\n\nworld")
	f.Add(para(700, "a") + "\n\n" + para(700, "b"))
	f.Add(strings.Repeat("ü", 1200) + "\r\n\r\nx")
	f.Fuzz(func(t *testing.T, text string) {
		checkSpans(t, text, Split(text))
	})
}

func TestDocuments(t *testing.T) {
	fsys := fstest.MapFS{
		"agents/a/agent.yaml":                  {Data: []byte("name: a\n")},
		"agents/a/MEMORY.md":                   {Data: []byte("agent memory")},
		"agents/a/memory.md":                   {Data: []byte("ignored: MEMORY.md exists")},
		"agents/a/memory/2026-01-02.md":        {Data: []byte("day two")},
		"agents/a/memory/topics/deep.md":       {Data: []byte("deep")},
		"agents/a/memory/notes.txt":            {Data: []byte("not markdown")},
		"agents/a/users/alice/memory.md":       {Data: []byte("alice fallback")},
		"agents/a/users/alice/memory/x.md":     {Data: []byte("alice log")},
		"agents/a/users/alice/SOUL.md":         {Data: []byte("not memory")},
		"agents/a/users/bad%zz/MEMORY.md":      {Data: []byte("undecodable")},
		"agents/a/users/README.md":             {Data: []byte("a file, not a user")},
		"agents/b/MEMORY.md":                   {Data: []byte("other agent")},
		"agents/a/users/alice/memory/sub/y.md": {Data: []byte("alice nested")},
	}
	docs, problems, err := Documents(fsys, "agents/a")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range docs {
		got = append(got, d.User+":"+d.Path+"="+d.Text)
		if d.Hash != Hash([]byte(d.Text)) {
			t.Errorf("%s: hash %s", d.Path, d.Hash)
		}
	}
	want := []string{
		":MEMORY.md=agent memory",
		":memory/2026-01-02.md=day two",
		":memory/topics/deep.md=deep",
		"alice:memory.md=alice fallback",
		"alice:memory/sub/y.md=alice nested",
		"alice:memory/x.md=alice log",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("documents:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(problems) != 1 || problems[0].Path != "users/bad%zz" {
		t.Errorf("problems = %v, want one for users/bad%%zz", problems)
	}
}

func TestDocumentsAtRoot(t *testing.T) {
	fsys := fstest.MapFS{
		"memory.md":           {Data: []byte("root fallback")},
		"memory/2026-01.md":   {Data: []byte("log")},
		"skills/x/SKILL.md":   {Data: []byte("skill")},
		"users/bob/MEMORY.md": {Data: []byte("bob")},
	}
	docs, problems, err := Documents(fsys, ".")
	if err != nil || len(problems) != 0 {
		t.Fatal(err, problems)
	}
	if len(docs) != 3 || docs[0].Path != "memory.md" || docs[1].Path != "memory/2026-01.md" || docs[2].User != "bob" {
		t.Errorf("docs = %+v", docs)
	}
	chunks := docs[1].Chunks()
	if len(chunks) != 1 || chunks[0].Path != "memory/2026-01.md" || chunks[0].Hash != Hash([]byte("log")) {
		t.Errorf("chunks = %+v", chunks)
	}
}

// Each chunk after the first indexes the last line of the one before it
// (in a conversation, the turn it answers), outside its text.
func TestChunksLeadIn(t *testing.T) {
	text := "## 10:00\nAnn: what did you paint?\n\n" + para(600, "x") + "\n\n## 10:01\nMel: a sunrise over the lake."
	chunks := NewDocument("memory/2023-05-08.md", "", text).Chunks()
	if len(chunks) != 2 {
		t.Fatalf("got %d chunks: %+v", len(chunks), chunks)
	}
	if chunks[0].Context != "" || chunks[1].Context != para(600, "x") {
		t.Errorf("contexts %q, %.20q; want none, then the previous chunk's last line", chunks[0].Context, chunks[1].Context)
	}
	if got := IndexText(chunks[1]); !strings.Contains(got, "May 2023") || !strings.Contains(got, "xxx") || !strings.HasSuffix(got, chunks[1].Text) {
		t.Errorf("IndexText = %.80q; want the date words, the lead-in and the text", got)
	}
	if LeadIn("one\ntwo") != "two" || LeadIn("solo") != "solo" {
		t.Errorf("LeadIn: %q, %q", LeadIn("one\ntwo"), LeadIn("solo"))
	}
}

// TestChunksAfter: the chunks of a new version of a document are its
// Chunks, each chunk with the lines and text of one of the last
// version's taking that one's hash; a chunk whose text changed on the
// same lines is hashed again.
func TestChunksAfter(t *testing.T) {
	para := func(n int) string {
		return strings.Repeat(fmt.Sprintf("entry %d: met the customer about the invoice.\n", n), 12) + "\n"
	}
	var text string
	for n := range 5 {
		text += para(n)
	}
	before := NewDocument("memory/2026-01-01.md", "u1", text)
	prev := before.Chunks()
	if len(prev) < 3 {
		t.Fatalf("%d chunks; the test wants 3 or more", len(prev))
	}
	for i := range prev {
		prev[i].Hash = fmt.Sprint("kept-", i) // what was indexed, as a marker
	}
	after := NewDocument(before.Path, before.User, text+para(5))
	got, want := after.ChunksAfter(prev), after.Chunks()
	if len(got) != len(want) {
		t.Fatalf("%d chunks, want %d", len(got), len(want))
	}
	for i := range got {
		w := want[i]
		if i < len(prev) && prev[i].Text == w.Text && prev[i].StartLine == w.StartLine {
			w.Hash = prev[i].Hash
		}
		if got[i] != w {
			t.Errorf("chunk %d: %+v, want %+v", i, got[i], w)
		}
	}
	if got[0].Hash != "kept-0" {
		t.Errorf("an unchanged chunk was hashed again: %q", got[0].Hash)
	}
	// The first chunk's text changes, its lines do not.
	edited := NewDocument(before.Path, before.User, strings.Replace(text, "entry 0:", "entry X:", 1))
	if got := edited.ChunksAfter(prev); got[0].Hash != edited.Chunks()[0].Hash || got[1].Hash != "kept-1" {
		t.Errorf("an edited chunk: hashes %q, %q; want its own, then kept-1", got[0].Hash, got[1].Hash)
	}
}

// TestChunksExtending: whatever a log holds (blank lines of spaces,
// lines longer than a chunk, carriage returns, entries without a final
// line break), the chunks of a version that extends the last one are
// its Chunks, their text in the new version; so are those of a version
// that does not extend it (an edit, a truncation).
func TestChunksExtending(t *testing.T) {
	pieces := []string{"## 10:00\n", "entry: met the customer about the invoice.\n", "\n", "  \n", "\t\n",
		strings.Repeat("a long line about the garden ", 50) + "\n", "a line with a carriage return\r\n", "no final break",
		strings.Repeat("word ", 120) + "\n"}
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 38))
		var text string
		var prev []Chunk
		for step := range 120 {
			next := text
			switch n := r.IntN(12); {
			case n == 0 && len(text) > 0:
				next = text[:r.IntN(len(text))]
			case n == 1 && len(text) > 0:
				i := r.IntN(len(text))
				next = text[:i] + "edited " + text[i:]
			case n == 2 && len(prev) > 0 && strings.Contains(text, prev[len(prev)-1].Text):
				next = text[:strings.Index(text, prev[len(prev)-1].Text)] // cut where the last chunk starts
			default:
				for range 1 + r.IntN(4) {
					next += pieces[r.IntN(len(pieces))]
				}
			}
			d := NewDocument("memory/2026-03-01.md", "u1", next)
			got, want := d.ChunksExtending(text, prev), d.Chunks()
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d step %d: %d chunks\n%+v\nwant %d\n%+v", seed, step, len(got), got, len(want), want)
			}
			for i, c := range got {
				if !strings.Contains(next, "\r") && !within(c.Text, next) {
					t.Fatalf("seed %d step %d: chunk %d's text is not in the new version", seed, step, i)
				}
			}
			text, prev = next, got
		}
	}
}

// within reports whether part's bytes lie in whole's memory.
func within(part, whole string) bool {
	p, w := uintptr(unsafe.Pointer(unsafe.StringData(part))), uintptr(unsafe.Pointer(unsafe.StringData(whole)))
	return p >= w && p+uintptr(len(part)) <= w+uintptr(len(whole))
}
