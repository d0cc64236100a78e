package main

import "strings"

// suggest returns the candidate a mistyped name most likely meant, or ""
// when none is close: the one fewest edits away (an insertion, deletion,
// substitution or swap of two neighbours each), at most one edit for a
// name of 3 or 4 letters and two for a longer one; else the shortest
// candidate that starts with name (at least 2 letters), as "--rep" means
// --report. Ties go to the candidate listed first.
func suggest(name string, candidates []string) string {
	n := len([]rune(name))
	limit := 0
	switch {
	case n >= 5:
		limit = 2
	case n >= 3:
		limit = 1
	}
	best, bestDist := "", limit+1
	for _, c := range candidates {
		if c == name {
			continue
		}
		if d := editDistance(name, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	if best != "" || n < 2 {
		return best
	}
	for _, c := range candidates {
		if c != name && strings.HasPrefix(c, name) && (best == "" || len(c) < len(best)) {
			best = c
		}
	}
	return best
}

// editDistance is the optimal string alignment distance of a and b, in
// code points: insertions, deletions, substitutions and transpositions of
// adjacent code points.
func editDistance(a, b string) int {
	s, t := []rune(a), []rune(b)
	// d[i][j] is the distance of s[:i] and t[:j].
	d := make([][]int, len(s)+1)
	for i := range d {
		d[i] = make([]int, len(t)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(s); i++ {
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(s)][len(t)]
}
