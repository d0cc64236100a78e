package main

import "testing"

// TestSuggest: the likely intended name of a mistyped one.
func TestSuggest(t *testing.T) {
	flags := []string{"dir", "agent", "user", "session", "channel", "rev", "report", "json", "allow-create", "allow-non-fast-forward"}
	tests := []struct{ name, want string }{
		{"sesion", "session"},        // a deletion
		{"agnet", "agent"},           // a swap
		{"sessoin", "session"},       // a swap
		{"chanel", "channel"},        // a deletion
		{"usr", "user"},              // short: one edit
		{"rep", "rev"},               // one edit wins over a prefix
		{"repo", "report"},           // a prefix
		{"allow-cr", "allow-create"}, // a prefix, the shortest
		{"allow", "allow-create"},    // the shortest of two prefixes
		{"js", "json"},               // a prefix of a short one
		{"x", ""},                    // too short for anything
		{"zzzzzz", ""},               // nothing close
		{"dirt", "dir"},              // an insertion
		{"session", ""},              // itself is no suggestion
	}
	for _, tt := range tests {
		if got := suggest(tt.name, flags); got != tt.want {
			t.Errorf("suggest(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "ab", 2}, {"kitten", "sitting", 3},
		{"ab", "ba", 1}, {"agent", "agnet", 1}, {"ça", "ca", 1}, {"abc", "abc", 0},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
