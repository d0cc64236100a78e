package daemon

import (
	"fmt"
	"io/fs"
	"time"

	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/templates"
	"github.com/quirehq/quire/workspace"
)

// budgetAfter says what a write of content to full (a path of the tree
// base; nil content: a deletion) did to the prompt: the file's status in
// the private main session of user at now, on base with the write
// applied. It reads the same way a deployment does (seeds included); an
// assembly that fails leaves the status out rather than the answer.
func (wr *writer) budgetAfter(ref agentRef, base fs.FS, user, full string, content []byte, now time.Time) api.BudgetStatus {
	if content == nil {
		return api.BudgetStatus{Status: api.BudgetNotInPrompt}
	}
	view := workspace.WithFiles(base, map[string][]byte{full: content})
	ws, err := prompt.Open(view, prompt.Options{RootName: ref.src.rootName, Tokenizer: wr.tokens, Seeds: templates.Seeds, EstimateTokens: true})
	if err != nil {
		wr.log.Warn("budget after a write: cannot open the workspace", "path", full, "err", err)
		return api.BudgetStatus{}
	}
	res, err := ws.Assemble(prompt.Request{Agent: ref.ag.agent.Name, User: user, Session: prompt.SessionMain, Channel: prompt.ChannelDM, Now: now})
	if err != nil {
		wr.log.Warn("budget after a write: cannot assemble the prompt", "path", full, "err", err)
		return api.BudgetStatus{}
	}
	for _, f := range res.Report.Files {
		if f.Path == full {
			return budgetStatus(f, &res.Report.Budget, user)
		}
	}
	return api.BudgetStatus{Status: api.BudgetNotInPrompt}
}

// budgetStatus turns a file's report, held to b, into a write's budget
// status.
func budgetStatus(f prompt.FileReport, b *prompt.Budget, user string) api.BudgetStatus {
	st := api.BudgetStatus{Chars: f.OriginalChars, LimitChars: f.LimitChars, InjectedChars: f.InjectedChars}
	if b.Unit == prompt.UnitTokens {
		st.Unit, st.Tokens, st.LimitTokens, st.InjectedTokens = string(prompt.UnitTokens), f.OriginalTokens, f.LimitTokens, f.InjectedTokens
	}
	n := prompt.GroupThousands
	switch f.Status {
	case prompt.StatusTruncated, prompt.StatusClamped:
		st.Status = api.BudgetTruncated
		first, last := f.Dropped[0].Lines()
		st.Cut = fmt.Sprintf("lines %d–%d (%s of %s chars) are cut: %s", first, last, n(f.OriginalChars-f.HeadChars-f.TailChars), n(f.OriginalChars), f.Note)
	case prompt.StatusDropped:
		st.Status = api.BudgetDropped
		st.Cut = fmt.Sprintf("all %s chars: %s", n(f.OriginalChars), f.Note)
	default: // full, empty
		st.Status = api.BudgetFits
	}
	for _, p := range prompt.FileProblems(f, b, user) {
		if p.Code == prompt.CodeBudgetNear {
			st.Warning = p.Message
		}
	}
	return st
}

// userOfPath is the user whose directory holds rel (a path relative to
// an agent directory), or "".
func userOfPath(rel string) string {
	dir, _, ok := workspace.SplitUser(rel)
	if !ok {
		return ""
	}
	user, err := workspace.DecodeID(dir)
	if err != nil {
		return ""
	}
	return user
}
