package prompt

import "github.com/quirehq/quire/workspace"

// CodeBudgetNear is the code of the warning that a context file has
// reached NearBudgetPercent of its per-file budget: `quire check`, the
// push report, the language server and the API's writes say it before
// the file is cut.
const CodeBudgetNear = "budget-near"

// NearBudgetPercent is how full of its per-file budget a context file is
// when it draws a CodeBudgetNear warning (the MindRoom proposal's 80 %).
const NearBudgetPercent = 80

// nearBudget reports whether a file injected whole has reached
// NearBudgetPercent of the per-file limit it was held to, in b's unit, and
// the percentage, its size and the limit.
func nearBudget(f FileReport, b *Budget) (near bool, pct, size, limit int) {
	size, limit = f.OriginalChars, f.LimitChars
	if b.Unit == UnitTokens {
		size, limit = f.OriginalTokens, f.LimitTokens
	}
	if f.Status != StatusFull || limit <= 0 {
		return false, 0, size, limit
	}
	pct = size * 100 / limit
	return pct >= NearBudgetPercent, pct, size, limit
}

// FileProblems returns the findings of one file's report, held to budget
// b, from a private main session of user ("" for none): what Check says
// about it (over or near its budget, cut, dropped, not UTF-8, too large).
// The push report and the daemon's write answers use it to say the same in
// the same words.
func FileProblems(f FileReport, b *Budget, user string) []workspace.Problem {
	return fileProblems(f, b, user)
}
