package prompt

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/quirehq/quire/workspace"
)

// Check lints the workspace: agent.yaml, user directory names, file names,
// encodings and sizes, and the budgets of a private main session for the
// agent and for each of its users. It reads only what it needs and returns
// problems sorted by path and line.
func (w *Workspace) Check() []workspace.Problem {
	probs := append([]workspace.Problem(nil), w.problems...)
	for _, a := range w.agents {
		probs = append(probs, w.checkAgent(a)...)
	}
	sort.SliceStable(probs, func(i, j int) bool {
		if probs[i].Path != probs[j].Path {
			return probs[i].Path < probs[j].Path
		}
		return probs[i].Line < probs[j].Line
	})
	return dedupe(probs)
}

func (w *Workspace) checkAgent(a *Agent) []workspace.Problem {
	users, probs := w.Users(a)
	probs = append(probs, w.checkNames(a, a.Dir, "")...)
	for _, u := range users {
		dir, _ := a.UserDir(u)
		probs = append(probs, w.checkNames(a, dir, u)...)
	}
	for _, u := range append([]string{""}, users...) {
		rep, err := w.AssembleReport(Request{Agent: a.Name, User: u})
		if err != nil {
			probs = append(probs, assembleProblem(a, err))
			continue
		}
		probs = append(probs, rep.Problems...)
		for _, f := range rep.Files {
			probs = append(probs, fileProblems(f, &rep.Budget, u)...)
		}
	}
	return probs
}

// fileProblems turns one file's report, from a private main session of
// user (or of no user) under budget b, into findings.
func fileProblems(f FileReport, b *Budget, user string) []workspace.Problem {
	var probs []workspace.Problem
	add := func(sev workspace.Severity, code string, line int, format string, args ...any) {
		probs = append(probs, workspace.Problem{Path: f.Path, Line: line, Severity: sev, Code: code, Message: fmt.Sprintf(format, args...)})
	}
	if f.Path == "" {
		return nil
	}
	if f.InvalidBytes > 0 {
		add(workspace.SeverityWarning, "invalid-utf8", 0, "%d bytes are not valid UTF-8; they reach the prompt as U+FFFD (the git endpoint refuses such files): re-save the file as UTF-8", f.InvalidBytes)
	}
	if f.OriginalBytes > workspace.MaxFileBytes {
		add(workspace.SeverityError, "file-too-large", 0, "%s is %s bytes; files over %s bytes are refused by the git endpoint and only head and tail are read", f.Name, GroupThousands(int(f.OriginalBytes)), GroupThousands(workspace.MaxFileBytes))
	}
	session := " in a private session without a user"
	if user != "" {
		session = fmt.Sprintf(" in user %q's private session", user)
	}
	switch f.Status {
	case StatusFull:
		if near, pct, size, limit := nearBudget(f, b); near {
			add(workspace.SeverityWarning, CodeBudgetNear, 0, "%s is %s %s, %d %% of the per-file budget of %s: past %s more %s it is cut from the prompt",
				f.Name, GroupThousands(size), b.UnitName(), pct, GroupThousands(limit), GroupThousands(limit-size), b.UnitName())
		}
	case StatusTruncated:
		if !f.OverBudget { // the reject policy already reported it as an error
			first, last := f.Dropped[0].Lines()
			size, limit := f.OriginalChars, f.LimitChars
			if b.Unit == UnitTokens {
				size, limit = f.OriginalTokens, f.LimitTokens
			}
			add(workspace.SeverityWarning, "budget-truncated", first, "%s is %s %s, over the per-file budget of %s %s: lines %d–%d (%s chars) are cut from the prompt",
				f.Name, GroupThousands(size), b.UnitName(), GroupThousands(limit), b.UnitName(), first, last, GroupThousands(f.OriginalChars-f.HeadChars-f.TailChars))
		}
	case StatusClamped:
		first, last := f.Dropped[0].Lines()
		limit := f.LimitChars
		if b.Unit == UnitTokens {
			limit = f.LimitTokens
		}
		add(workspace.SeverityWarning, "budget-clamped", first, "%s is cut to the %s %s the total budget has left after %s%s: lines %d–%d are cut",
			f.Name, GroupThousands(limit), b.UnitName(), strings.Join(f.UsedBy, ", "), session, first, last)
	case StatusDropped:
		add(workspace.SeverityWarning, "budget-dropped", 0, "%s does not reach the prompt%s: %s used up the total budget", f.Name, session, strings.Join(f.UsedBy, ", "))
	}
	return probs
}

// checkNames looks at the Markdown files directly in dir for names that
// look like context files but are not spelled as Quire expects, and, for
// predefined agents, persona files in a user's directory, which are ignored.
func (w *Workspace) checkNames(a *Agent, dir, user string) []workspace.Problem {
	entries, err := fs.ReadDir(w.fsys, dir)
	if err != nil {
		return nil
	}
	var probs []workspace.Problem
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(strings.ToLower(name), ".md") {
			continue
		}
		p := joinPath(dir, name)
		if !workspace.IsContextFileName(name) {
			if want, ok := nearContextName(name); ok {
				probs = append(probs, workspace.Problem{Path: p, Severity: workspace.SeverityWarning, Code: "file-name", Message: nearNameMessage(name, want)})
			}
			continue
		}
		if user != "" && a.Config.Type == TypePredefined {
			for _, pf := range workspace.SharedFiles {
				if name == pf {
					probs = append(probs, workspace.Problem{Path: p, Severity: workspace.SeverityWarning, Code: "user-persona-ignored",
						Message: fmt.Sprintf("%s in a user's directory is ignored: agent %q is predefined, so %s is shared by all users (set type: open in agent.yaml for per-user copies)", name, a.Name, name)})
				}
			}
		}
	}
	return probs
}

// dedupe removes problems reported more than once (a file shared by several
// users' sessions is budgeted once per user).
func dedupe(ps []workspace.Problem) []workspace.Problem {
	seen := map[workspace.Problem]bool{}
	out := ps[:0]
	for _, p := range ps {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// assembleProblem is the finding of an assembly that failed: on the file
// that could not be read when the error names one (a symbolic link, a
// FIFO), on agent.yaml otherwise.
func assembleProblem(a *Agent, err error) workspace.Problem {
	var pe *fs.PathError
	if errors.As(err, &pe) && fs.ValidPath(pe.Path) && pe.Path != "." {
		return workspace.Problem{Path: pe.Path, Severity: workspace.SeverityError, Code: "read", Message: fmt.Sprintf("cannot read: %v", pe.Err)}
	}
	return workspace.Problem{Path: joinPath(a.Dir, workspace.ConfigFile), Severity: workspace.SeverityError, Code: "assemble", Message: err.Error()}
}
