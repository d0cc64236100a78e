package memory

import (
	"sort"

	"github.com/quirehq/quire/workspace"
)

// Ranking constants of behavior.md §6.
const (
	// DefaultLimit is the number of hits a search returns when none is asked for.
	DefaultLimit = 6
	// CandidateFactor times the limit is how many candidates each side
	// (full-text, vector) contributes.
	CandidateFactor = 4
	// DefaultTextWeight weighs the full-text side of a weighted hybrid
	// score; the vector side weighs 1 − DefaultTextWeight.
	DefaultTextWeight = 0.9
	// UserBoost multiplies the score of a per-user hit.
	UserBoost = 1.2
	// RRFK is the constant k of reciprocal rank fusion.
	RRFK = 60
)

// Fusion selects how full-text and vector candidates are combined.
type Fusion int

const (
	// Weighted is the default: see Rank.
	Weighted Fusion = iota
	// RRF is reciprocal rank fusion: Σ 1/(RRFK + rank) over the sides.
	RRF
)

// Scope of a hit.
const (
	ScopeAgent = "agent"
	ScopeUser  = "user"
)

// Candidate is a chunk found by either side of a search, scored on both:
// TextScore is its BM25 score for the query (0 when it holds no query
// term), VectorScore its cosine similarity to the query's vector (0
// without one).
type Candidate struct {
	Chunk
	TextScore, VectorScore float64
}

// Hit is one search result.
type Hit struct {
	Path      string  `json:"path"`
	User      string  `json:"user,omitempty"`
	StartLine int     `json:"start_line"`
	EndLine   int     `json:"end_line"`
	Text      string  `json:"text"`
	Score     float64 `json:"score"`
	// TextScore and VectorScore are the parts of Score its full-text and
	// its vector side contributed (user boost included): they sum to
	// Score. VectorScore is 0 when the vector side did not run (no
	// embedder, or the query got no vector).
	TextScore   float64 `json:"text_score"`
	VectorScore float64 `json:"vector_score"`
	// Scope is ScopeUser for a per-user document, ScopeAgent otherwise.
	Scope string `json:"scope"`
	// Date is a daily log's date (YYYY-MM-DD), "" for other documents.
	Date string `json:"date,omitempty"`
	// Context is the text around the hit asked for with Query.Context:
	// neighbouring chunks of the same document, not part of the hit
	// (Text is what matched; StartLine..EndLine its lines only).
	Context []Context `json:"context,omitempty"`
}

// RankOptions tunes Rank.
type RankOptions struct {
	// Limit is the most hits returned; 0 means DefaultLimit.
	Limit int
	// MinScore drops hits scoring below it (after the user boost).
	MinScore float64
	// Fusion chooses weighted scores (default) or reciprocal rank fusion.
	Fusion Fusion
	// TextWeight is the weight of the full-text side in a weighted
	// score, the vector side getting 1 − TextWeight; nil means
	// DefaultTextWeight.
	TextWeight *float64
	// Vectors says the vector side ran (the store has an embedder and
	// the query got a vector); without it the text side weighs 1.
	Vectors bool
}

// CandidateLimit is how many candidates each side should fetch for a
// search returning limit hits (0 means DefaultLimit).
func CandidateLimit(limit int) int {
	if limit <= 0 {
		limit = DefaultLimit
	}
	return CandidateFactor * limit
}

type chunkKey struct {
	user, path string
	line       int
}

// Rank merges the candidates of both sides into hits. Every candidate is
// scored on both sides, so a chunk found by one side only is not left
// at 0 on the other. Weighted fusion (the default) puts both sides on
// 0..1 over the candidates — BM25 divided by the best, cosine min-max
// scaled between the worst and the best — and scores
// TextWeight × text + (1 − TextWeight) × vector (text alone when the
// vector side did not run). RRF sums 1/(RRFK + rank) over the sides a
// candidate ranks on (rank by that side's score, positive scores only).
// Per-user hits are multiplied by UserBoost; of duplicates (same path and
// start line) the user's copy is kept once, never summed; ties are broken
// by path then line; hits below MinScore are dropped. The result is
// deterministic.
func Rank(cands []Candidate, opts RankOptions) []Hit {
	limit := opts.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	cs := uniqueCandidates(cands)
	sc := newScorer(cs, opts)
	// Score every candidate, then keep one hit per (path, start line):
	// the user's copy when there is one, else the agent's.
	byPlace := map[chunkKey]Hit{}
	for _, c := range cs {
		text, vector := sc.parts(c)
		h := hitOf(c, text, vector)
		place := chunkKey{path: h.Path, line: h.StartLine}
		if prev, ok := byPlace[place]; ok && !preferred(h, prev) {
			continue
		}
		byPlace[place] = h
	}
	return topHits(byPlace, opts.MinScore, limit)
}

// uniqueCandidates keeps one entry per chunk (stores may list a chunk
// twice) and drops candidates scoring nothing on either side.
func uniqueCandidates(cands []Candidate) []Candidate {
	seen := map[chunkKey]bool{}
	var cs []Candidate
	for _, c := range cands {
		k := chunkKey{c.User, c.Path, c.StartLine}
		if !seen[k] && (c.TextScore > 0 || c.VectorScore > 0) {
			seen[k] = true
			cs = append(cs, c)
		}
	}
	return cs
}

// scorer fuses a candidate's two side scores into one, before the user
// boost: by rank (RRF) or by weighting the sides scaled to 0..1.
type scorer struct {
	rrf                     bool
	textRank, vecRank       map[chunkKey]int
	wt                      float64
	maxText, minVec, maxVec float64
}

func newScorer(cs []Candidate, opts RankOptions) scorer {
	sc := scorer{rrf: opts.Fusion == RRF}
	for i, c := range cs {
		sc.maxText = max(sc.maxText, c.TextScore)
		if i == 0 {
			sc.minVec, sc.maxVec = c.VectorScore, c.VectorScore
		}
		sc.minVec, sc.maxVec = min(sc.minVec, c.VectorScore), max(sc.maxVec, c.VectorScore)
	}
	sc.wt = DefaultTextWeight
	if opts.TextWeight != nil {
		sc.wt = min(max(*opts.TextWeight, 0), 1)
	}
	if !opts.Vectors {
		sc.wt = 1
	}
	if sc.rrf {
		sc.textRank = sideRanks(cs, func(c Candidate) float64 { return c.TextScore })
		if opts.Vectors {
			sc.vecRank = sideRanks(cs, func(c Candidate) float64 { return c.VectorScore })
		}
	}
	return sc
}

// parts returns what each side contributes to c's score: the score is
// their sum.
func (sc *scorer) parts(c Candidate) (text, vector float64) {
	if sc.rrf {
		k := chunkKey{c.User, c.Path, c.StartLine}
		if r := sc.textRank[k]; r > 0 {
			text = 1 / float64(RRFK+r)
		}
		if r := sc.vecRank[k]; r > 0 {
			vector = 1 / float64(RRFK+r)
		}
		return text, vector
	}
	t, v := 0.0, 0.0
	if sc.maxText > 0 {
		t = c.TextScore / sc.maxText
	}
	if sc.maxVec > sc.minVec {
		v = (c.VectorScore - sc.minVec) / (sc.maxVec - sc.minVec)
	} else if sc.maxVec > 0 {
		v = 1
	}
	return sc.wt * t, (1 - sc.wt) * v
}

// hitOf makes c a hit with the fused score of its side parts, boosted
// when c is per-user.
func hitOf(c Candidate, text, vector float64) Hit {
	scope, score := ScopeAgent, text+vector
	if c.User != "" {
		score, text, vector = score*UserBoost, text*UserBoost, vector*UserBoost
		scope = ScopeUser
	}
	h := Hit{Path: c.Path, User: c.User, StartLine: c.StartLine, EndLine: c.EndLine, Text: c.Text,
		Score: score, TextScore: text, VectorScore: vector, Scope: scope}
	if d, ok := workspace.LogDate(c.Path); ok {
		h.Date = d.Format("2006-01-02")
	}
	return h
}

// topHits returns the best limit hits scoring at least minScore, in order.
func topHits(byPlace map[chunkKey]Hit, minScore float64, limit int) []Hit {
	hits := make([]Hit, 0, len(byPlace))
	for _, h := range byPlace {
		if h.Score >= minScore {
			hits = append(hits, h)
		}
	}
	sort.Slice(hits, func(i, j int) bool { return hitLess(hits[i], hits[j]) })
	if len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}

// sideRanks returns the 1-based rank of each candidate with a positive
// score on one side, by that score (ties by path, line, user).
func sideRanks(cs []Candidate, score func(Candidate) float64) map[chunkKey]int {
	var side []Candidate
	for _, c := range cs {
		if score(c) > 0 {
			side = append(side, c)
		}
	}
	sort.SliceStable(side, func(i, j int) bool {
		a, b := side[i], side[j]
		if sa, sb := score(a), score(b); sa != sb {
			return sa > sb
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.StartLine != b.StartLine {
			return a.StartLine < b.StartLine
		}
		return a.User < b.User
	})
	ranks := make(map[chunkKey]int, len(side))
	for i, c := range side {
		ranks[chunkKey{c.User, c.Path, c.StartLine}] = i + 1
	}
	return ranks
}

// preferred reports whether h should replace prev at the same place: a
// user's copy beats the agent's; between equals the higher score, then the
// smaller user id, wins (deterministically).
func preferred(h, prev Hit) bool {
	if (h.User != "") != (prev.User != "") {
		return h.User != ""
	}
	if h.Score != prev.Score {
		return h.Score > prev.Score
	}
	return h.User < prev.User
}

func hitLess(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	if a.Path != b.Path {
		return a.Path < b.Path
	}
	if a.StartLine != b.StartLine {
		return a.StartLine < b.StartLine
	}
	return a.User < b.User
}
