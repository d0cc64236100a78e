package agent

import (
	"bytes"
	"io/fs"
	"strings"

	"github.com/quirehq/quire/workspace"
)

// Merge is the merge policy of agent workspaces (a gitsync.MergePolicy):
// a daily log of an agent or of one of its users merges as the union of
// its entries (UnionEntries), so neither a person's push nor an agent's
// write loses an entry; every other file merges line by line (nil). The
// log is known by the one rule (workspace.LogDate) applied to the path
// relative to its agent's directory (DirOf, in either tree: an agent
// directory either side has), so users/memory/2026-01-02.md of a root
// agent, a user's file named memory, is no log.
func Merge(p string, ours, theirs fs.FS) func(base, ours, theirs []byte) []byte {
	// Only a file named like a log can be one: skip the agent lookup (a
	// stat per directory level in both trees) for every other file.
	if i := strings.LastIndex(p, workspace.MemoryDir+"/"); i < 0 || i > 0 && p[i-1] != '/' || !workspace.IsDailyLog(p[i:]) {
		return nil
	}
	isAgent := func(dir string) bool { return hasConfig(ours, dir) || hasConfig(theirs, dir) }
	if !workspace.IsDailyLog(rel(dirOf(p, isAgent), p)) {
		return nil
	}
	return UnionEntries
}

// UnionEntries merges two versions of a daily log: the preamble (lines
// before the first "## " heading) of ours unless only theirs changed it,
// then every entry of ours, then every entry of theirs that ours does not
// hold (an entry is a "## " heading and the lines up to the next). Nothing
// of either side is lost.
func UnionEntries(base, ours, theirs []byte) []byte {
	bp, _ := splitEntries(base)
	op, oe := splitEntries(ours)
	tp, te := splitEntries(theirs)
	pre := op
	if op == bp {
		pre = tp
	}
	var out bytes.Buffer
	out.WriteString(pre)
	have := map[string]bool{}
	for _, e := range oe {
		have[entryKey(e)] = true
		out.WriteString(e) // ours as it is
	}
	for _, e := range te {
		if have[entryKey(e)] {
			continue
		}
		have[entryKey(e)] = true
		// One blank line between entries.
		if b := out.Bytes(); len(b) > 0 && !bytes.HasSuffix(b, []byte("\n\n")) {
			if !bytes.HasSuffix(b, []byte("\n")) {
				out.WriteByte('\n')
			}
			out.WriteByte('\n')
		}
		out.WriteString(e)
	}
	return out.Bytes()
}

// entryKey compares entries ignoring trailing blank lines (the last entry
// of a file may lack the blank line the others end with).
func entryKey(e string) string { return strings.TrimRight(e, " \t\r\n") }

// splitEntries splits a daily log into its preamble and entries.
func splitEntries(b []byte) (string, []string) {
	lines := strings.SplitAfter(string(b), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	pre := 0
	for pre < len(lines) && !isEntryHeading(lines[pre]) {
		pre++
	}
	var entries []string
	for i := pre; i < len(lines); {
		j := i + 1
		for j < len(lines) && !isEntryHeading(lines[j]) {
			j++
		}
		entries = append(entries, strings.Join(lines[i:j], ""))
		i = j
	}
	return strings.Join(lines[:pre], ""), entries
}

func isEntryHeading(line string) bool {
	return strings.HasPrefix(line, "## ")
}
