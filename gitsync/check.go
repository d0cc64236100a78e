package gitsync

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"sort"

	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/skills"
	"github.com/quirehq/quire/workspace"
)

// CheckOptions configure Check.
type CheckOptions struct {
	// Paths limits the file rules (workspace.CheckFile) to these files, the
	// ones a push or a write changes; nil applies them to every file of
	// the tree. Paths that do not exist (deleted files) are skipped.
	Paths []string
	// FilesOnly applies the file rules alone, without the content checks
	// (agent.yaml, budgets, names, SKILL.md front matter).
	FilesOnly bool
	// RootName names the agent at the root of a tree without agent.yaml.
	RootName string
	// Cache is shared with other readers of the same trees (the daemon's
	// token cache); nil makes a new one.
	Cache *prompt.Tokenizer
	// Workspace, when set, is fsys already opened (the language server's
	// analysis): its reads and plans are reused.
	Workspace *prompt.Workspace
	// CheckAgent lints an agent's SKILL.md files; nil means
	// skills.CheckAgent.
	CheckAgent func(fsys fs.FS, agentDir string) []workspace.Problem
	// SharedSkills are the skill tiers every agent has besides its
	// workspace's and the built-ins (~/.agents/skills, the managed
	// directory): a name in an allow list that matches a skill there is
	// known. Without them such a name draws a warning.
	SharedSkills []skills.Source
	// SkillsOf, when set, is the skill set an agent's allow list is
	// checked against (a caller that has it loaded already: the language
	// server); nil loads the workspace's tiers and SharedSkills.
	SkillsOf func(a *prompt.Agent) *skills.Set
}

// Check is Quire's one validation of a workspace tree: `quire check`, the
// git endpoint's push validator (WorkspaceChecks), the API's writes, the
// language server and the daemon all run it, so what one refuses the
// others refuse too. It applies the file rules (workspace.CheckFile: no
// symbolic links or special files, nothing over 1 MiB, text files in
// UTF-8) and then the content checks: a tree with no agent (an error),
// agent.yaml, budgets (an error under the reject policy), file and user
// directory names, SKILL.md front matter, allow-list names that match no
// skill. The findings are sorted by path and line; a file the rules
// refuse is reported once, by the rules.
func Check(ctx context.Context, fsys fs.FS, opts CheckOptions) []workspace.Problem {
	var files []workspace.Problem
	if opts.Paths == nil {
		files = checkAllFiles(ctx, fsys)
	} else {
		for _, p := range opts.Paths {
			if ctx.Err() != nil {
				return append(files, cancelled(ctx))
			}
			files = append(files, checkOneFile(fsys, p)...)
		}
	}
	if opts.FilesOnly || ctx.Err() != nil {
		if ctx.Err() != nil {
			files = append(files, cancelled(ctx))
		}
		return merge(files, nil)
	}
	var found []workspace.Problem
	checkAgent := opts.CheckAgent
	if checkAgent == nil {
		checkAgent = skills.CheckAgent
	}
	// The content is read as a working tree is: a link (which a commit's
	// tree would read as its target path) or a special file is not read.
	content := workspace.NoLinks(fsys)
	ws, err := opts.Workspace, error(nil)
	if ws == nil {
		ws, err = prompt.Open(content, prompt.Options{RootName: opts.RootName, Tokenizer: opts.Cache})
	}
	if err != nil {
		found = append(found, openProblem(err))
	} else {
		found = append(found, ws.Check()...)
		for _, a := range ws.Agents() {
			if ctx.Err() != nil {
				break
			}
			found = append(found, checkAgent(content, a.Dir)...)
			if opts.SkillsOf != nil {
				found = append(found, opts.SkillsOf(a).UnknownAllowed(a)...)
			} else {
				found = append(found, skills.CheckAllowList(content, a, opts.SharedSkills)...)
			}
		}
	}
	if ctx.Err() != nil {
		found = append(found, cancelled(ctx))
	}
	return merge(files, found)
}

// CodeNoAgent is the code of the problem of a tree with no agent
// (prompt.NoAgentError): a push of it is refused.
const CodeNoAgent = "no-agent"

// openProblem is the problem of a tree prompt.Open refuses.
func openProblem(err error) workspace.Problem {
	if errors.Is(err, prompt.ErrNoAgent) {
		return workspace.Problem{Severity: workspace.SeverityError, Code: CodeNoAgent, Message: err.Error()}
	}
	return workspace.Problem{Severity: workspace.SeverityError, Code: workspace.CodeUnreadable, Message: "cannot read the workspace: " + err.Error()}
}

func cancelled(ctx context.Context) workspace.Problem {
	return workspace.Problem{Severity: workspace.SeverityError, Code: "cancelled", Message: "validation cancelled: " + ctx.Err().Error()}
}

// checkAllFiles applies the file rules to every file of fsys but .git.
func checkAllFiles(ctx context.Context, fsys fs.FS) []workspace.Problem {
	var out []workspace.Problem
	_ = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if err != nil {
			out = append(out, unreadable(p, err))
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if bad := workspace.CheckName(p); bad != nil && p != "." {
			out = append(out, bad...)
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if d.Name() == ".git" && p != "." {
				return fs.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			// A file that went away while the tree was walked is not there.
			if !errors.Is(err, fs.ErrNotExist) {
				out = append(out, unreadable(p, err))
			}
			return nil
		}
		out = append(out, workspace.CheckFile(p, info, func() ([]byte, error) { return fs.ReadFile(fsys, p) })...)
		return nil
	})
	return out
}

// checkOneFile applies the file rules to p, if it exists.
func checkOneFile(fsys fs.FS, p string) []workspace.Problem {
	if bad := workspace.CheckName(p); bad != nil {
		return bad
	}
	info, err := fs.Stat(fsys, p)
	if info == nil {
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return []workspace.Problem{unreadable(p, err)}
	}
	return workspace.CheckFile(p, info, func() ([]byte, error) { return fs.ReadFile(fsys, p) })
}

func unreadable(p string, err error) workspace.Problem {
	var pe *fs.PathError
	if errors.As(err, &pe) && fs.ValidPath(pe.Path) {
		p, err = pe.Path, pe.Err
	}
	if p == "." {
		p = ""
	}
	return workspace.Problem{Path: p, Severity: workspace.SeverityError, Code: workspace.CodeUnreadable, Message: "cannot read: " + err.Error()}
}

// merge adds the content findings to the file rules' ones, leaving out
// what the content checks say about a file the rules already refused
// (that it cannot be read, is too large or is not UTF-8), and sorts them.
func merge(files, content []workspace.Problem) []workspace.Problem {
	refused := map[string]bool{}
	for _, p := range files {
		refused[p.Path] = true
	}
	seen := map[workspace.Problem]bool{}
	var out []workspace.Problem
	for _, p := range files {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, p := range content {
		if seen[p] {
			continue
		}
		seen[p] = true
		if refused[p.Path] || refusedBelow(refused, p.Path) {
			switch p.Code {
			case workspace.CodeUnreadable, workspace.CodeInvalidUTF8, workspace.CodeControlChar, workspace.CodeFileTooLarge, "skill-read":
				continue
			}
		}
		out = append(out, p)
	}
	return sortProblems(out)
}

func refusedBelow(refused map[string]bool, p string) bool {
	for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
		if refused[d] {
			return true
		}
	}
	return false
}

func sortProblems(ps []workspace.Problem) []workspace.Problem {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Path != ps[j].Path {
			return ps[i].Path < ps[j].Path
		}
		return ps[i].Line < ps[j].Line
	})
	return ps
}

// Errors keeps the errors of ps.
func Errors(ps []workspace.Problem) []workspace.Problem {
	var out []workspace.Problem
	for _, p := range ps {
		if p.Severity == workspace.SeverityError {
			out = append(out, p)
		}
	}
	return out
}
