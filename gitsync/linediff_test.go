package gitsync

import (
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/quirehq/quire/internal/testenv"
)

// TestLineDiffLikeGit: lineDiff changes the lines git's diff changes
// (Myers, without the indent heuristic: what git merge-file runs), on
// texts of few distinct lines (where a change can be placed in many
// ways), of lines that repeat amid lines that do not (which git sets
// aside), and of texts large and different enough for git to stop
// looking for the shortest diff.
func TestLineDiffLikeGit(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	type pair struct{ a, b []string }
	var cases []pair
	edited := func(lines, distinct, edits int) pair {
		a := randomLines(r, lines, distinct)
		return pair{a, randomEdits(r, a, distinct, edits)}
	}
	for range 100 {
		cases = append(cases, edited(r.IntN(40), 2+r.IntN(6), r.IntN(10)))
	}
	for range 30 {
		cases = append(cases, edited(300, 40, 60))
	}
	// Blocks turned around every so often in a long text: long snakes
	// past many rounds.
	long := numberedLines(40000)
	turned := slices.Clone(long)
	for at := 10; at+6 <= len(turned); at += 66 {
		slices.Reverse(turned[at : at+6])
	}
	cases = append(cases, pair{long, turned})
	// Two unrelated texts of two distinct lines: the furthest point.
	cases = append(cases, pair{randomLines(r, 3000, 0), randomLines(r, 3000, 0)})

	for i, c := range cases {
		a, b := strings.Join(c.a, ""), strings.Join(c.b, "")
		classes := lineClasses(c.a, c.b)
		steps := 1 << 40
		got, ok := lineDiff(classes[0], classes[1], &steps)
		if !ok {
			t.Fatalf("case %d: out of steps", i)
		}
		if want := gitDiffHunks(t, a, b); !slices.Equal(got, want) {
			if len(a)+len(b) > 2000 {
				a, b = a[:min(len(a), 1000)]+"…", b[:min(len(b), 1000)]+"…"
			}
			t.Fatalf("case %d:\n%q\n%q\nhunks %v\ngit's %v", i, a, b, got, want)
		}
	}
}

// randomLines is n lines of distinct different texts, blank lines and
// "}" (with distinct 0, of "a" and "b").
func randomLines(r *rand.Rand, n, distinct int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = randomLine(r, distinct)
	}
	return out
}

func randomLine(r *rand.Rand, distinct int) string {
	if distinct == 0 {
		return []string{"a\n", "b\n"}[r.IntN(2)]
	}
	switch r.IntN(6) {
	case 0:
		return "\n"
	case 1:
		return "}\n"
	}
	return strconv.Itoa(r.IntN(distinct)) + "\n"
}

func numberedLines(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("line %d\n", i)
	}
	return out
}

// randomEdits makes up to n edits to lines: runs of lines inserted,
// deleted or replaced.
func randomEdits(r *rand.Rand, lines []string, distinct, n int) []string {
	out := slices.Clone(lines)
	for range r.IntN(n + 1) {
		at := r.IntN(len(out) + 1)
		switch r.IntN(3) {
		case 0:
			out = slices.Insert(out, at, randomLines(r, 1+r.IntN(3), distinct)...)
		case 1:
			if at < len(out) {
				out = slices.Delete(out, at, at+1+r.IntN(min(3, len(out)-at)))
			}
		default:
			if at < len(out) {
				out[at] = randomLine(r, distinct)
			}
		}
	}
	return out
}

// gitDiffHunks diffs a to b with git diff -U0 (Myers, no indent
// heuristic) and returns its hunks.
func gitDiffHunks(t testing.TB, a, b string) []hunk {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a": a, "b": b})
	cmd := exec.Command("git", "diff", "--no-index", "--no-color", "-U0", "--no-indent-heuristic", "--diff-algorithm=myers", "a", "b")
	cmd.Dir = dir
	cmd.Env = append(testenv.GitEnv(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
	out, err := cmd.Output()
	if err != nil && cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("git diff: %v", err)
	}
	var hs []hunk
	for _, l := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(l, "@@ ") {
			continue
		}
		var h hunk
		f := strings.Fields(l)
		h.base, h.baseN = hunkRange(f[1])
		h.side, h.sideN = hunkRange(f[2])
		hs = append(hs, h)
	}
	return hs
}

// hunkRange reads a range of a hunk header ("-3,2" or "+7"): its first
// line, 0-based (for an empty range, the line it comes after), and its
// length.
func hunkRange(s string) (start, n int) {
	first, count, found := strings.Cut(s[1:], ",")
	start, _ = strconv.Atoi(first)
	n = 1
	if found {
		n, _ = strconv.Atoi(count)
	}
	if n > 0 {
		start--
	}
	return start, n
}
