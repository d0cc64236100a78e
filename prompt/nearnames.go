package prompt

import (
	"strings"

	"github.com/quirehq/quire/workspace"
)

// nearContextName returns the context file name that name (a Markdown file
// directly in an agent or user directory that is not a context file) most
// likely meant — the same name in another case, or one a typo away:
// AGENT.md for AGENTS.md, BOOTSTAP.md for BOOTSTRAP.md — and whether
// there is one.
func nearContextName(name string) (string, bool) {
	stem := strings.ToUpper(strings.TrimSuffix(name, name[len(name)-len(".md"):]))
	best, bestDist := "", -1
	for _, want := range workspace.ContextFiles {
		if strings.EqualFold(name, want) {
			return want, true
		}
		ws := strings.TrimSuffix(want, ".md")
		d := editDistance(stem, ws)
		if d <= typoDistance(ws) && (bestDist < 0 || d < bestDist) {
			best, bestDist = want, d
		}
	}
	return best, bestDist >= 0
}

// typoDistance is how many edits away from a context file name's stem a
// name is taken for a typo of it: one for short names (USER, SOUL), two
// for longer ones (BOOTSTRAP, HEARTBEAT).
func typoDistance(stem string) int {
	if len(stem) <= 6 {
		return 1
	}
	return 2
}

// editDistance is the Levenshtein distance between a and b, in bytes
// (context file names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// nearNameMessage says that name is not read and what to rename it to.
func nearNameMessage(name, want string) string {
	if strings.EqualFold(name, want) {
		return name + " is not read: context file names are case-sensitive; rename it to " + want
	}
	return name + " is not read: it is not a context file name; if you meant " + want + ", rename it to " + want
}
