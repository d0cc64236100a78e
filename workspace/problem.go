package workspace

import "fmt"

// Severity says how serious a Problem is.
type Severity string

// Severities, from most to least serious. Errors make `quire check` exit 1,
// make the git endpoint refuse a push and make the API refuse a write.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// Problem is one finding about a workspace: a file, where in it, how bad,
// and what to do. Paths are slash-separated and relative to the root of the
// fs.FS the workspace was read through. Every package reports findings as
// Problems: `quire check`, the push validator, the API's writes and the
// language server show the same ones.
type Problem struct {
	Path     string   `json:"path"`
	Line     int      `json:"line,omitempty"`   // 1-based; 0 when the problem is about the whole file
	Column   int      `json:"column,omitempty"` // 1-based, in code points; 0 when unknown
	Severity Severity `json:"severity"`
	Code     string   `json:"code"` // stable identifier, e.g. "agent-yaml-unknown-key"
	Message  string   `json:"message"`
}

// String formats p the way compilers do: path:line:col: severity: message.
func (p Problem) String() string {
	loc := p.Path
	if p.Line > 0 {
		loc = fmt.Sprintf("%s:%d", loc, p.Line)
		if p.Column > 0 {
			loc = fmt.Sprintf("%s:%d", loc, p.Column)
		}
	}
	if p.Severity == "" {
		if loc == "" {
			return p.Message
		}
		return loc + ": " + p.Message
	}
	return fmt.Sprintf("%s: %s: %s", loc, p.Severity, p.Message)
}

// HasErrors reports whether any problem in ps is an error.
func HasErrors(ps []Problem) bool {
	for _, p := range ps {
		if p.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Errors keeps the errors of ps.
func Errors(ps []Problem) []Problem {
	var out []Problem
	for _, p := range ps {
		if p.Severity == SeverityError {
			out = append(out, p)
		}
	}
	return out
}
