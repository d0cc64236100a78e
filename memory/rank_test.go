package memory

import (
	"fmt"
	"math"
	"testing"
)

func cand(user, path string, line int, text, vector float64) Candidate {
	return Candidate{Chunk: Chunk{Path: path, User: user, StartLine: line, EndLine: line, Text: path}, TextScore: text, VectorScore: vector}
}

func weight(w float64) *float64 { return &w }

func TestRank(t *testing.T) {
	type hit struct {
		user, path string
		line       int
		score      float64
	}
	vec := RankOptions{Vectors: true}
	wt := DefaultTextWeight
	tests := []struct {
		name  string
		cands []Candidate
		opts  RankOptions
		want  []hit
	}{
		{
			name:  "text divided by the best, cosine min-max scaled, default weights",
			cands: []Candidate{cand("", "a.md", 1, 10, 0.2), cand("", "b.md", 1, 5, 0.8), cand("", "c.md", 1, 0, 0.5)},
			opts:  vec,
			want:  []hit{{"", "a.md", 1, wt}, {"", "b.md", 1, wt*0.5 + (1 - wt)}, {"", "c.md", 1, (1 - wt) * 0.5}},
		},
		{
			name:  "weight per request",
			cands: []Candidate{cand("", "a.md", 1, 10, 0.2), cand("", "b.md", 1, 5, 0.8)},
			opts:  RankOptions{Vectors: true, TextWeight: weight(0.3)},
			want:  []hit{{"", "b.md", 1, 0.3*0.5 + 0.7}, {"", "a.md", 1, 0.3}},
		},
		{
			// The old rule scored a text-only candidate 0 on the vector
			// side, so at most 0.3: the vector side's scale decided.
			name: "vector scale cannot outvote the text side",
			cands: []Candidate{cand("", "exact.md", 1, 12, 0.30), cand("", "near1.md", 1, 1, 0.36),
				cand("", "near2.md", 1, 0, 0.35), cand("", "near3.md", 1, 0, 0.34)},
			opts: RankOptions{Vectors: true, Limit: 1},
			want: []hit{{"", "exact.md", 1, wt}},
		},
		{
			name:  "no vector side: text weighs 1",
			cands: []Candidate{cand("", "a.md", 1, 4, 0), cand("", "b.md", 1, 2, 0)},
			want:  []hit{{"", "a.md", 1, 1}, {"", "b.md", 1, 0.5}},
		},
		{
			name:  "only vector candidates",
			cands: []Candidate{cand("", "a.md", 1, 0, 0.9), cand("", "b.md", 1, 0, 0.5)},
			opts:  vec,
			want:  []hit{{"", "a.md", 1, 1 - wt}, {"", "b.md", 1, 0}},
		},
		{
			name:  "no positive score, no candidate",
			cands: []Candidate{cand("", "b.md", 1, 0, 0), cand("", "a.md", 1, 0, -0.5)},
			opts:  vec,
			want:  []hit{},
		},
		{
			name:  "user boost",
			cands: []Candidate{cand("", "a.md", 1, 10, 0), cand("u", "b.md", 1, 9, 0)},
			want:  []hit{{"u", "b.md", 1, 0.9 * 1.2}, {"", "a.md", 1, 1}},
		},
		{
			name:  "duplicate keeps the user's copy once, never summed",
			cands: []Candidate{cand("", "MEMORY.md", 3, 10, 0.5), cand("u", "MEMORY.md", 3, 10, 0.5)},
			opts:  vec,
			want:  []hit{{"u", "MEMORY.md", 3, (wt + 1 - wt) * 1.2}},
		},
		{
			name:  "duplicate keeps the user's copy even when it scores lower",
			cands: []Candidate{cand("", "MEMORY.md", 3, 10, 0), cand("u", "MEMORY.md", 3, 1, 0)},
			want:  []hit{{"u", "MEMORY.md", 3, 0.1 * 1.2}},
		},
		{
			name:  "same path, other line is not a duplicate",
			cands: []Candidate{cand("", "MEMORY.md", 3, 10, 0), cand("u", "MEMORY.md", 9, 10, 0)},
			want:  []hit{{"u", "MEMORY.md", 9, 1.2}, {"", "MEMORY.md", 3, 1}},
		},
		{
			name:  "ties by path then line",
			cands: []Candidate{cand("", "b.md", 1, 1, 0), cand("", "a.md", 7, 1, 0), cand("", "a.md", 2, 1, 0)},
			want:  []hit{{"", "a.md", 2, 1}, {"", "a.md", 7, 1}, {"", "b.md", 1, 1}},
		},
		{
			name:  "min score",
			cands: []Candidate{cand("", "a.md", 1, 10, 0), cand("", "b.md", 1, 2, 0)},
			opts:  RankOptions{MinScore: 0.5},
			want:  []hit{{"", "a.md", 1, 1}},
		},
		{
			name:  "limit",
			cands: []Candidate{cand("", "a.md", 1, 3, 0), cand("", "b.md", 1, 2, 0), cand("", "c.md", 1, 1, 0)},
			opts:  RankOptions{Limit: 2},
			want:  []hit{{"", "a.md", 1, 1}, {"", "b.md", 1, 2.0 / 3}},
		},
		{
			name:  "rrf",
			cands: []Candidate{cand("", "a.md", 1, 10, 0), cand("", "b.md", 1, 5, 0.9)},
			opts:  RankOptions{Fusion: RRF, Vectors: true},
			want:  []hit{{"", "b.md", 1, 1.0/62 + 1.0/61}, {"", "a.md", 1, 1.0 / 61}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Rank(tt.cands, tt.opts)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d hits %+v, want %d", len(got), got, len(tt.want))
			}
			for i, h := range got {
				w := tt.want[i]
				if h.User != w.user || h.Path != w.path || h.StartLine != w.line || math.Abs(h.Score-w.score) > 1e-9 {
					t.Errorf("hit %d = %s:%s:%d %.4f, want %s:%s:%d %.4f", i, h.User, h.Path, h.StartLine, h.Score, w.user, w.path, w.line, w.score)
				}
				if (h.User != "") != (h.Scope == ScopeUser) {
					t.Errorf("hit %d scope %q", i, h.Scope)
				}
			}
		})
	}
}

func TestRankDateOfDailyLogs(t *testing.T) {
	got := Rank([]Candidate{cand("", "memory/2023-05-08.md", 3, 2, 0), cand("", "MEMORY.md", 1, 1, 0)}, RankOptions{})
	if got[0].Date != "2023-05-08" || got[1].Date != "" {
		t.Errorf("dates %q, %q; want 2023-05-08 and none", got[0].Date, got[1].Date)
	}
}

func TestRankDefaultLimit(t *testing.T) {
	var cs []Candidate
	for i := 0; i < 40; i++ {
		cs = append(cs, cand("", fmt.Sprintf("t%02d.md", i), 1, float64(100-i), float64(100-i)/100))
	}
	if got := Rank(cs, RankOptions{Vectors: true}); len(got) != DefaultLimit {
		t.Errorf("got %d hits, want %d", len(got), DefaultLimit)
	}
	if got := Rank(cs, RankOptions{Limit: 100}); len(got) != 40 {
		t.Errorf("got %d hits, want 40", len(got))
	}
	if CandidateLimit(0) != 24 || CandidateLimit(2) != 8 {
		t.Errorf("CandidateLimit = %d, %d", CandidateLimit(0), CandidateLimit(2))
	}
}

func TestRankDeterministic(t *testing.T) {
	cs := []Candidate{cand("", "b.md", 1, 1, 0), cand("u", "a.md", 1, 1, 0), cand("", "a.md", 1, 1, 0), cand("v", "c.md", 2, 1, 0)}
	first := fmt.Sprint(Rank(cs, RankOptions{}))
	for i := 0; i < 20; i++ {
		cs[0], cs[i%4] = cs[i%4], cs[0]
		if got := fmt.Sprint(Rank(cs, RankOptions{})); got != first {
			t.Fatalf("order changed:\n%s\n%s", got, first)
		}
	}
}

// TestRankScoreParts checks that a hit's text and vector parts are what
// each side contributed: they sum to the score, boost included, and the
// vector part is 0 when the vector side did not run.
func TestRankScoreParts(t *testing.T) {
	wt := DefaultTextWeight
	cands := []Candidate{cand("", "a.md", 1, 10, 0.2), cand("", "b.md", 1, 5, 0.8), cand("u", "c.md", 1, 0, 0.5)}
	tests := []struct {
		name         string
		opts         RankOptions
		path         string
		text, vector float64
	}{
		{"weighted, text only", RankOptions{Vectors: true}, "a.md", wt, 0},
		{"weighted, both sides", RankOptions{Vectors: true}, "b.md", wt * 0.5, 1 - wt},
		{"weighted, user boost on both parts", RankOptions{Vectors: true}, "c.md", 0, (1 - wt) * 0.5 * UserBoost},
		{"no vector side", RankOptions{}, "b.md", 0.5, 0},
		{"rrf", RankOptions{Vectors: true, Fusion: RRF}, "b.md", 1.0 / (RRFK + 2), 1.0 / (RRFK + 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, h := range Rank(cands, tt.opts) {
				if h.Path != tt.path {
					continue
				}
				if math.Abs(h.TextScore-tt.text) > 1e-9 || math.Abs(h.VectorScore-tt.vector) > 1e-9 {
					t.Errorf("parts = text %.4f, vector %.4f; want %.4f, %.4f", h.TextScore, h.VectorScore, tt.text, tt.vector)
				}
				if math.Abs(h.TextScore+h.VectorScore-h.Score) > 1e-9 {
					t.Errorf("parts %.4f + %.4f do not sum to the score %.4f", h.TextScore, h.VectorScore, h.Score)
				}
				return
			}
			t.Fatalf("no hit for %s", tt.path)
		})
	}
}
