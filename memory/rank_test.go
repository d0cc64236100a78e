package memory

import (
	"fmt"
	"math"
	"testing"
)

func cand(user, path string, line int, score float64) Candidate {
	return Candidate{Chunk: Chunk{Path: path, User: user, StartLine: line, EndLine: line, Text: path}, Score: score}
}

func TestRank(t *testing.T) {
	type hit struct {
		user, path string
		line       int
		score      float64
	}
	tests := []struct {
		name         string
		text, vector []Candidate
		opts         RankOptions
		want         []hit
	}{
		{
			name:   "text scores normalised by the best, 0.3/0.7 weights",
			text:   []Candidate{cand("", "a.md", 1, 10), cand("", "b.md", 1, 5)},
			vector: []Candidate{cand("", "b.md", 1, 0.8), cand("", "a.md", 1, 0.2)},
			want:   []hit{{"", "b.md", 1, 0.3*0.5 + 0.7*0.8}, {"", "a.md", 1, 0.3*1 + 0.7*0.2}},
		},
		{
			name: "only text: weight 1",
			text: []Candidate{cand("", "a.md", 1, 4), cand("", "b.md", 1, 2)},
			want: []hit{{"", "a.md", 1, 1}, {"", "b.md", 1, 0.5}},
		},
		{
			name:   "only vector: weight 1",
			vector: []Candidate{cand("", "a.md", 1, 0.9)},
			want:   []hit{{"", "a.md", 1, 0.9}},
		},
		{
			name:   "no positive score, no candidate",
			text:   []Candidate{cand("", "b.md", 1, 0)},
			vector: []Candidate{cand("", "a.md", 1, -0.5), cand("", "c.md", 1, 0)},
			want:   []hit{},
		},
		{
			name: "user boost",
			text: []Candidate{cand("", "a.md", 1, 10), cand("u", "b.md", 1, 9)},
			want: []hit{{"u", "b.md", 1, 0.9 * 1.2}, {"", "a.md", 1, 1}},
		},
		{
			name:   "duplicate keeps the user's copy once, never summed",
			text:   []Candidate{cand("", "MEMORY.md", 3, 10), cand("u", "MEMORY.md", 3, 10)},
			vector: []Candidate{cand("", "MEMORY.md", 3, 0.5), cand("u", "MEMORY.md", 3, 0.5)},
			want:   []hit{{"u", "MEMORY.md", 3, (0.3 + 0.35) * 1.2}},
		},
		{
			name: "duplicate keeps the user's copy even when it scores lower",
			text: []Candidate{cand("", "MEMORY.md", 3, 10), cand("u", "MEMORY.md", 3, 1)},
			want: []hit{{"u", "MEMORY.md", 3, 0.1 * 1.2}},
		},
		{
			name: "same path, other line is not a duplicate",
			text: []Candidate{cand("", "MEMORY.md", 3, 10), cand("u", "MEMORY.md", 9, 10)},
			want: []hit{{"u", "MEMORY.md", 9, 1.2}, {"", "MEMORY.md", 3, 1}},
		},
		{
			name: "ties by path then line",
			text: []Candidate{cand("", "b.md", 1, 1), cand("", "a.md", 7, 1), cand("", "a.md", 2, 1)},
			want: []hit{{"", "a.md", 2, 1}, {"", "a.md", 7, 1}, {"", "b.md", 1, 1}},
		},
		{
			name: "min score",
			text: []Candidate{cand("", "a.md", 1, 10), cand("", "b.md", 1, 2)},
			opts: RankOptions{MinScore: 0.5},
			want: []hit{{"", "a.md", 1, 1}},
		},
		{
			name: "limit",
			text: []Candidate{cand("", "a.md", 1, 3), cand("", "b.md", 1, 2), cand("", "c.md", 1, 1)},
			opts: RankOptions{Limit: 2},
			want: []hit{{"", "a.md", 1, 1}, {"", "b.md", 1, 2.0 / 3}},
		},
		{
			name:   "rrf",
			text:   []Candidate{cand("", "a.md", 1, 10), cand("", "b.md", 1, 5)},
			vector: []Candidate{cand("", "b.md", 1, 0.9)},
			opts:   RankOptions{Fusion: RRF},
			want:   []hit{{"", "b.md", 1, 1.0/62 + 1.0/61}, {"", "a.md", 1, 1.0 / 61}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Rank(tt.text, tt.vector, tt.opts)
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

func TestRankDefaultLimitAndCandidates(t *testing.T) {
	var text, vector []Candidate
	for i := 0; i < 40; i++ {
		text = append(text, cand("", fmt.Sprintf("t%02d.md", i), 1, float64(100-i)))
		vector = append(vector, cand("", fmt.Sprintf("v%02d.md", i), 1, float64(100-i)/100))
	}
	if got := Rank(text, vector, RankOptions{}); len(got) != DefaultLimit {
		t.Errorf("got %d hits, want %d", len(got), DefaultLimit)
	}
	// With limit 2 only 8 candidates per side take part: the text side's
	// best is t00 (normalised by t00, not by a candidate outside the cut).
	got := Rank(text, vector, RankOptions{Limit: 40})
	if len(got) != 40 {
		t.Errorf("got %d hits, want 40", len(got))
	}
	if CandidateLimit(0) != 24 || CandidateLimit(2) != 8 {
		t.Errorf("CandidateLimit = %d, %d", CandidateLimit(0), CandidateLimit(2))
	}
	few := Rank(text, nil, RankOptions{Limit: 100})
	if len(few) != 40 {
		t.Errorf("got %d", len(few))
	}
	cut := Rank(append([]Candidate{cand("", "z.md", 1, 0.5)}, text[:8]...), nil, RankOptions{Limit: 2})
	for _, h := range cut {
		if h.Path == "z.md" {
			t.Error("a candidate beyond 4 × limit took part")
		}
	}
}

func TestRankDeterministic(t *testing.T) {
	text := []Candidate{cand("", "b.md", 1, 1), cand("u", "a.md", 1, 1), cand("", "a.md", 1, 1), cand("v", "c.md", 2, 1)}
	first := fmt.Sprint(Rank(text, nil, RankOptions{}))
	for i := 0; i < 20; i++ {
		text[0], text[i%4] = text[i%4], text[0]
		if got := fmt.Sprint(Rank(text, nil, RankOptions{})); got != first {
			t.Fatalf("order changed:\n%s\n%s", got, first)
		}
	}
}
