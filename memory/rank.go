package memory

import (
	"sort"
)

// Ranking constants of behavior.md §6.
const (
	// DefaultLimit is the number of hits a search returns when none is asked for.
	DefaultLimit = 6
	// CandidateFactor times the limit is how many candidates each side
	// (full-text, vector) contributes.
	CandidateFactor = 4
	// TextWeight and VectorWeight weigh the two sides of a hybrid score.
	TextWeight, VectorWeight = 0.3, 0.7
	// UserBoost multiplies the score of a per-user hit.
	UserBoost = 1.2
	// RRFK is the constant k of reciprocal rank fusion.
	RRFK = 60
)

// Fusion selects how full-text and vector candidates are combined.
type Fusion int

const (
	// Weighted is the default: 0.3 × normalised text score + 0.7 × cosine.
	Weighted Fusion = iota
	// RRF is reciprocal rank fusion: Σ 1/(RRFK + rank) over the sides.
	RRF
)

// Scope of a hit.
const (
	ScopeAgent = "agent"
	ScopeUser  = "user"
)

// Candidate is a chunk found by one side of a search with that side's raw
// score: a full-text relevance (BM25, ts_rank) or a cosine similarity.
type Candidate struct {
	Chunk
	Score float64
}

// Hit is one search result.
type Hit struct {
	Path      string  `json:"path"`
	User      string  `json:"user,omitempty"`
	StartLine int     `json:"start_line"`
	EndLine   int     `json:"end_line"`
	Text      string  `json:"text"`
	Score     float64 `json:"score"`
	// Scope is ScopeUser for a per-user document, ScopeAgent otherwise.
	Scope string `json:"scope"`
}

// RankOptions tunes Rank.
type RankOptions struct {
	// Limit is the most hits returned; 0 means DefaultLimit.
	Limit int
	// MinScore drops hits scoring below it (after the user boost).
	MinScore float64
	// Fusion chooses weighted scores (default) or reciprocal rank fusion.
	Fusion Fusion
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

// Rank merges full-text and vector candidates into hits (behavior.md §6):
// each side keeps its best CandidateLimit candidates that score above 0; full-text scores are
// divided by the best one; score = 0.3 × text + 0.7 × vector, a side's
// weight becoming 1 when the other has no candidates; per-user hits are
// multiplied by 1.2; of duplicates (same path and start line) the user's
// copy is kept once, never summed; ties are broken by path then line;
// hits below MinScore are dropped. The result is deterministic.
func Rank(text, vector []Candidate, opts RankOptions) []Hit {
	limit := opts.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	text = best(text, CandidateLimit(limit))
	vector = best(vector, CandidateLimit(limit))

	type entry struct {
		chunk       Chunk
		textScore   float64
		vectorScore float64
		textRank    int // 1-based, 0 = absent
		vectorRank  int
		fromText    bool
		fromVector  bool
	}
	entries := map[chunkKey]*entry{}
	var order []chunkKey
	get := func(c Chunk) *entry {
		k := chunkKey{c.User, c.Path, c.StartLine}
		e, ok := entries[k]
		if !ok {
			e = &entry{chunk: c}
			entries[k] = e
			order = append(order, k)
		}
		return e
	}
	maxText := 0.0
	for _, c := range text {
		maxText = max(maxText, c.Score)
	}
	for i, c := range text {
		e := get(c.Chunk)
		if !e.fromText {
			e.fromText, e.textRank = true, i+1
			if maxText > 0 {
				e.textScore = c.Score / maxText
			}
		}
	}
	for i, c := range vector {
		e := get(c.Chunk)
		if !e.fromVector {
			e.fromVector, e.vectorRank = true, i+1
			e.vectorScore = c.Score
		}
	}
	wt, wv := TextWeight, VectorWeight
	switch {
	case len(vector) == 0:
		wt, wv = 1, 0
	case len(text) == 0:
		wt, wv = 0, 1
	}
	// Score every entry, then keep one hit per (path, start line): the
	// user's copy when there is one, else the agent's.
	byPlace := map[chunkKey]Hit{}
	for _, k := range order {
		e := entries[k]
		var score float64
		if opts.Fusion == RRF {
			if e.fromText {
				score += 1 / float64(RRFK+e.textRank)
			}
			if e.fromVector {
				score += 1 / float64(RRFK+e.vectorRank)
			}
		} else {
			score = wt*e.textScore + wv*e.vectorScore
		}
		scope := ScopeAgent
		if e.chunk.User != "" {
			score *= UserBoost
			scope = ScopeUser
		}
		h := Hit{Path: e.chunk.Path, User: e.chunk.User, StartLine: e.chunk.StartLine, EndLine: e.chunk.EndLine, Text: e.chunk.Text, Score: score, Scope: scope}
		place := chunkKey{path: h.Path, line: h.StartLine}
		if prev, ok := byPlace[place]; ok && !preferred(h, prev) {
			continue
		}
		byPlace[place] = h
	}
	hits := make([]Hit, 0, len(byPlace))
	for _, h := range byPlace {
		if h.Score >= opts.MinScore {
			hits = append(hits, h)
		}
	}
	sort.Slice(hits, func(i, j int) bool { return hitLess(hits[i], hits[j]) })
	if len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
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

// best returns the n highest-scoring candidates with a positive score,
// ties broken by path, line and user, without changing cs.
func best(cs []Candidate, n int) []Candidate {
	out := make([]Candidate, 0, len(cs))
	for _, c := range cs {
		if c.Score > 0 {
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
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
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}
