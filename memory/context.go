package memory

// MaxContext bounds Query.Context: the most neighbouring chunks a search
// returns on each side of a hit.
const MaxContext = 3

// Sides of a hit that context lies on.
const (
	Before = "before"
	After  = "after"
)

// Context is text a search returns around a hit without it being the
// hit: a chunk next to the hit's chunk in the same document (in a daily
// log, the entries of the same day just before or after it). An answer
// split across a chunk boundary is then read whole, while Hit.Text stays
// exactly what matched.
type Context struct {
	// Side is Before or After the hit.
	Side      string `json:"side"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
	Text      string `json:"text"`
}

// ContextSize returns how many neighbouring chunks on each side q asks
// for, within 0..MaxContext.
func (q Query) ContextSize() int {
	return min(max(q.Context, 0), MaxContext)
}

// Neighbours returns the context of the chunk at pos among chunks, which
// are ordered by user, path and line: up to n chunks of the same document
// before it (nearest last) and after it (nearest first).
func Neighbours(chunks []Chunk, pos, n int) []Context {
	var out []Context
	same := func(i int) bool {
		return i >= 0 && i < len(chunks) && chunks[i].Path == chunks[pos].Path && chunks[i].User == chunks[pos].User
	}
	first := pos
	for first > 0 && pos-first < n && same(first-1) {
		first--
	}
	for i := first; i < pos; i++ {
		out = append(out, contextOf(chunks[i], Before))
	}
	for i := pos + 1; i <= pos+n && same(i); i++ {
		out = append(out, contextOf(chunks[i], After))
	}
	return out
}

func contextOf(c Chunk, side string) Context {
	return Context{Side: side, StartLine: c.StartLine, EndLine: c.EndLine, Text: c.Text}
}
