package memory

import (
	"fmt"
	"testing"
)

func TestNeighbours(t *testing.T) {
	chunks := []Chunk{
		{Path: "MEMORY.md", StartLine: 1, EndLine: 2},
		{Path: "memory/2023-05-08.md", StartLine: 1, EndLine: 4},
		{Path: "memory/2023-05-08.md", StartLine: 6, EndLine: 9},
		{Path: "memory/2023-05-08.md", StartLine: 11, EndLine: 14},
		{Path: "memory/2023-05-08.md", StartLine: 16, EndLine: 19},
		{Path: "memory/2023-05-08.md", User: "alice", StartLine: 1, EndLine: 3},
	}
	lines := func(cs []Context) string {
		s := ""
		for _, c := range cs {
			s += fmt.Sprintf("%s:%d-%d ", c.Side, c.StartLine, c.EndLine)
		}
		return s
	}
	tests := []struct {
		pos, n int
		want   string
	}{
		{2, 1, "before:1-4 after:11-14 "},
		{2, 2, "before:1-4 after:11-14 after:16-19 "},
		{3, 2, "before:1-4 before:6-9 after:16-19 "},
		{1, 1, "after:6-9 "},    // not MEMORY.md before it
		{4, 1, "before:11-14 "}, // not alice's copy after it
		{0, 3, ""},              // a document of one chunk
		{5, 1, ""},              // alice's document alone
		{2, 0, ""},
	}
	for _, tt := range tests {
		if got := lines(Neighbours(chunks, tt.pos, tt.n)); got != tt.want {
			t.Errorf("Neighbours(%d, %d) = %q, want %q", tt.pos, tt.n, got, tt.want)
		}
	}
}

func TestContextSize(t *testing.T) {
	for in, want := range map[int]int{-1: 0, 0: 0, 2: 2, MaxContext: MaxContext, 99: MaxContext} {
		if got := (Query{Context: in}).ContextSize(); got != want {
			t.Errorf("ContextSize of %d = %d, want %d", in, got, want)
		}
	}
}
