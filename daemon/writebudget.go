package daemon

import (
	"bytes"
	"fmt"
	"io/fs"
	"sync"
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
	ws, err := prompt.Open(view, budgetOptions(ref.src.rootName, wr.tokens))
	if err != nil {
		wr.log.Warn("budget after a write: cannot open the workspace", "path", full, "err", err)
		return api.BudgetStatus{}
	}
	st, err := budgetIn(ws, ref, user, full, now)
	if err != nil {
		wr.log.Warn("budget after a write: cannot assemble the prompt", "path", full, "err", err)
	}
	return st
}

// writeBudget is budgetAfter of a write whose commit made tree (nil:
// unknown). When the tree holds content at full (no later write of its
// batch replaced it), the status is read on that tree, through the
// workspace the batch's writes share, instead of one opened for the
// write: the prompt of a write's commit is the prompt after the write.
// Otherwise it is read on the request's deployment with the write
// applied.
func (wr *writer) writeBudget(ref agentRef, tree *batchTree, user, full string, content []byte, now time.Time) api.BudgetStatus {
	if tree != nil && content != nil && tree.holds(full, content) {
		if ws, err := tree.workspace(); err == nil {
			if st, err := budgetIn(ws, ref, user, full, now); err == nil {
				return st
			}
		}
	}
	return wr.budgetAfter(ref, ref.dep.fsys, user, full, content, now)
}

// batchTree is the tree a batch's commit made, as the batch's writes
// read their budgets on it: the batch's writes over the tree the commit
// went on (read already to build them: no object of the new commit is
// read), and the workspace opened on it the first time one of them asks
// (budgetOptions), which the others share with the files outside their
// users' directories it read.
type batchTree struct {
	pf   *pendingFS // no longer written to: its reads are safe for concurrent use
	fsys fs.FS
	opts prompt.Options
	once sync.Once
	ws   *prompt.Workspace
	err  error
}

// newBatchTree returns the tree pf (a batch's, fully applied) makes, read
// as a deployment of agents reads it.
func newBatchTree(pf *pendingFS, agents []*prompt.Agent, opts prompt.Options) *batchTree {
	return &batchTree{pf: pf, fsys: &seedFS{base: pf, agents: agents}, opts: opts}
}

// holds reports whether the batch left content at name.
func (t *batchTree) holds(name string, content []byte) bool {
	w, ok := t.pf.files[name]
	return ok && !w.Delete && bytes.Equal(w.Content, content)
}

// workspace returns the tree's workspace, opening it the first time.
func (t *batchTree) workspace() (*prompt.Workspace, error) {
	t.once.Do(func() { t.ws, t.err = prompt.Open(t.fsys, t.opts) })
	return t.ws, t.err
}

// budgetOptions are the options of the workspace a write's budget is
// read on: a deployment's, with token counts estimated.
func budgetOptions(rootName string, tokens *prompt.Tokenizer) prompt.Options {
	return prompt.Options{RootName: rootName, Tokenizer: tokens, Seeds: templates.Seeds, EstimateTokens: true}
}

// budgetIn is the status of full in the private main session of user at
// now, assembled on ws (its report only: the prompt is not rendered).
func budgetIn(ws *prompt.Workspace, ref agentRef, user, full string, now time.Time) (api.BudgetStatus, error) {
	rep, err := ws.AssembleReport(prompt.Request{Agent: ref.ag.agent.Name, User: user, Session: prompt.SessionMain, Channel: prompt.ChannelDM, Now: now})
	if err != nil {
		return api.BudgetStatus{}, err
	}
	for i := range rep.Files {
		if f := &rep.Files[i]; f.Path == full {
			return budgetStatus(f, &rep.Budget, user), nil
		}
	}
	return api.BudgetStatus{Status: api.BudgetNotInPrompt}, nil
}

// budgetStatus turns a file's report, held to b, into a write's budget
// status.
func budgetStatus(f *prompt.FileReport, b *prompt.Budget, user string) api.BudgetStatus {
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
	for _, p := range prompt.FileProblems(*f, b, user) {
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
