package draft

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/quirehq/quire/workspace"
)

// fileBlock matches one <file path="NAME">…</file> block of an answer.
var fileBlock = regexp.MustCompile(`(?s)<file\s+path\s*=\s*["']([^"']*)["']\s*>(.*?)</file>`)

// codeFence is a Markdown code fence a model put around a file anyway.
var codeFence = regexp.MustCompile("(?s)^```[a-zA-Z]*\n(.*?)\n?```$")

// Parse reads the files of a model's answer: each block's path and
// content (a fence around it taken off, ending in one newline). Paths
// not in allowed, a path given twice and an answer without any block are
// problems (Path "answer"); text outside the blocks is ignored.
func Parse(answer string, allowed []string) (map[string][]byte, []workspace.Problem) {
	files := map[string][]byte{}
	var probs []workspace.Problem
	for _, m := range fileBlock.FindAllStringSubmatch(answer, -1) {
		name := strings.TrimSpace(m[1])
		switch {
		case !contains(allowed, name):
			probs = append(probs, answerProblem("the answer has a file %q; only %s are asked for", name, strings.Join(allowed, ", ")))
		case files[name] != nil:
			probs = append(probs, answerProblem("the answer has %s twice", name))
		default:
			files[name] = []byte(cleanContent(m[2]))
		}
	}
	if len(files) == 0 && len(probs) == 0 {
		probs = append(probs, answerProblem(`the answer has no <file path="…">…</file> block: the model did not follow the format. It began: %q`, begin(answer)))
	}
	return files, probs
}

// cleanContent is a block's content with the newline after the opening
// tag, a code fence around it and trailing space taken off, ending in one
// newline.
func cleanContent(s string) string {
	s = strings.TrimSpace(s)
	if m := codeFence.FindStringSubmatch(s); m != nil {
		s = strings.TrimSpace(m[1])
	}
	return s + "\n"
}

// CodeAnswer is the code of a problem with a model's answer as a whole.
const CodeAnswer = "llm-answer"

func answerProblem(format string, args ...any) workspace.Problem {
	return workspace.Problem{Path: "answer", Severity: workspace.SeverityError, Code: CodeAnswer, Message: fmt.Sprintf(format, args...)}
}

func begin(s string) string {
	r := []rune(strings.TrimSpace(s))
	if len(r) > 120 {
		return string(r[:120]) + "…"
	}
	return string(r)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// InvalidError is a model's answer that does not pass: the problems, as
// `quire check` would list them. Nothing was proposed.
type InvalidError struct {
	What     string // "the summoned agent" or "the consolidated MEMORY.md"
	Problems []workspace.Problem
}

func (e *InvalidError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s does not pass the checks, so nothing was proposed (try again, or a stronger model):", e.What)
	for _, p := range e.Problems {
		b.WriteString("\n  " + p.String())
	}
	return b.String()
}
