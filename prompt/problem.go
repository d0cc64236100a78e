package prompt

import "github.com/quirehq/quire/prompt/workspace"

// Severity says how serious a Problem is (workspace.Severity).
type Severity = workspace.Severity

// Severities, from most to least serious.
const (
	SeverityError   = workspace.SeverityError
	SeverityWarning = workspace.SeverityWarning
	SeverityInfo    = workspace.SeverityInfo
)

// Problem is one finding about a workspace (workspace.Problem).
type Problem = workspace.Problem

// HasErrors reports whether any problem in ps is an error.
func HasErrors(ps []Problem) bool { return workspace.HasErrors(ps) }
