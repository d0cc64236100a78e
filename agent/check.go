package agent

import (
	"context"
	"errors"
	"io/fs"
	"path"

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
	// server); nil loads Skills with SharedSkills.
	SkillsOf func(a *prompt.Agent) *skills.Set
}

// Check is Quire's one validation of a workspace tree: `quire check`, the
// git endpoint's push validator (WorkspaceChecks), the API's writes, the
// language server and the daemon all run it, so what one refuses the
// others refuse too. It applies the file rules (workspace.CheckFiles: no
// symbolic links or special files, nothing over 1 MiB, text files in
// UTF-8) and then the content checks: a tree with no agent (an error),
// agent.yaml, budgets (an error under the reject policy), file and user
// directory names, SKILL.md front matter, allow-list names that match no
// skill. The findings are sorted by path and line; a file the rules
// refuse is reported once, by the rules.
func Check(ctx context.Context, fsys fs.FS, opts CheckOptions) []workspace.Problem {
	files := workspace.CheckFiles(ctx, fsys, opts.Paths)
	if opts.FilesOnly || ctx.Err() != nil {
		return files
	}
	found := checkContent(ctx, fsys, opts)
	if ctx.Err() != nil {
		found = append(found, workspace.Cancelled(ctx))
	}
	return merge(files, found)
}

// checkContent runs the content checks on every agent of fsys.
func checkContent(ctx context.Context, fsys fs.FS, opts CheckOptions) []workspace.Problem {
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
		return []workspace.Problem{openProblem(err)}
	}
	found := ws.Check()
	for _, a := range ws.Agents() {
		if ctx.Err() != nil {
			break
		}
		found = append(found, checkAgent(content, a.Dir)...)
		found = append(found, unknownAllowed(content, a, opts)...)
	}
	return found
}

// unknownAllowed warns about each name in a's allow list (agent.yaml
// skills:) that matches no skill the agent has (Skills). Such a name
// allows nothing, and a list of nothing else silently turns every skill
// off. An agent without an allow list costs nothing.
func unknownAllowed(fsys fs.FS, a *prompt.Agent, opts CheckOptions) []workspace.Problem {
	if opts.SkillsOf != nil {
		return opts.SkillsOf(a).UnknownAllowed(a)
	}
	if len(a.Config.Skills) == 0 {
		return nil
	}
	return Skills(fsys, a, SkillOptions{Shared: opts.SharedSkills}).UnknownAllowed(a)
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

// merge adds the content findings to the file rules' ones, leaving out
// what the content checks say about a file the rules already refused
// (that it cannot be read, is too large or is not UTF-8), and sorts them.
func merge(files, content []workspace.Problem) []workspace.Problem {
	refused := map[string]bool{}
	seen := map[workspace.Problem]bool{}
	for _, p := range files {
		refused[p.Path] = true
		seen[p] = true
	}
	out := files
	for _, p := range content {
		if seen[p] {
			continue
		}
		seen[p] = true
		if refused[p.Path] || refusedBelow(refused, p.Path) {
			switch p.Code {
			case workspace.CodeUnreadable, workspace.CodeInvalidUTF8, workspace.CodeControlChar, workspace.CodeFileTooLarge, skills.CodeRead:
				continue
			}
		}
		out = append(out, p)
	}
	return workspace.SortProblems(out)
}

func refusedBelow(refused map[string]bool, p string) bool {
	for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
		if refused[d] {
			return true
		}
	}
	return false
}
