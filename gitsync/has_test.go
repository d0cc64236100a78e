package gitsync

import (
	"context"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/object"
)

func TestHasCommit(t *testing.T) {
	t.Parallel()
	r, err := Open(newBare(t))
	if err != nil {
		t.Fatal(err)
	}
	h, err := r.Commit(context.Background(), CommitRequest{Ref: "main", Writes: []FileWrite{{Path: "MEMORY.md", Content: []byte("m\n")}},
		Author: object.Signature{Name: "Ada", Email: "ada@agents.invalid"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		h    string
		want bool
	}{
		{h.String(), true},
		{strings.Repeat("1", 40), false},
		{h.String()[:12], false}, // only full hashes
		{"main", false},
		{strings.ToUpper(h.String()), false},
	} {
		if got := r.HasCommit(tc.h); got != tc.want {
			t.Errorf("HasCommit(%q) = %v, want %v", tc.h, got, tc.want)
		}
	}
}
