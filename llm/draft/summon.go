package draft

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/quirehq/quire/llm"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/workspace"
)

//go:embed prompts/summon.md
var summonSystem string

//go:embed prompts/summon_user.md
var summonUser string

// SummonFiles are the files a summoning may write, the required ones
// first.
var SummonFiles = []string{workspace.SoulFile, workspace.IdentityFile, workspace.AgentsFile,
	workspace.ToolsFile, workspace.HeartbeatFile, workspace.ConfigFile}

// requiredFiles must be in every summoning's answer.
var requiredFiles = SummonFiles[:3]

// SummonRequest asks for a new agent.
type SummonRequest struct {
	// Name is the new agent's name and directory name.
	Name string
	// Description says in plain words what the agent should be.
	Description string
	// Dir is the directory the agent's directory goes in ("" : beside
	// the tree's other agents, see AgentDir).
	Dir string
}

// Draft is a model's work that passed the checks, ready to propose.
type Draft struct {
	// Dir is the agent's directory in the tree.
	Dir string
	// Files are the files to write, by their path in the tree.
	Files map[string][]byte
	// Warnings are what the checks found short of an error.
	Warnings []workspace.Problem
}

// Paths are the draft's file paths, sorted.
func (d *Draft) Paths() []string {
	var out []string
	for p := range d.Files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// agentName is what a summoned agent may be called: it is a directory
// and a branch name (proposals/<agent>/<n>).
var agentName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// CheckName refuses a name a new agent cannot have.
func CheckName(name string) error {
	if !agentName.MatchString(name) {
		return fmt.Errorf("agent name %q: use 1 to 63 lower-case letters, digits, - and _, starting with a letter or digit", name)
	}
	return nil
}

// Errors a caller tells apart: a name a tree's agent has, a tree whose
// root is an agent, and a model that did not answer (its error wrapped).
var (
	ErrExists    = errors.New("an agent of that name exists")
	ErrRootAgent = errors.New("the repository's root is an agent")
	ErrModel     = errors.New("the model failed")
)

// AgentDir is where a new agent called name goes in base: dir/name when
// dir is given, else beside the tree's agents (in the directory that
// holds most of them), else at the top. A tree whose root is an agent (no
// agent.yaml anywhere) takes no second one.
func AgentDir(base fs.FS, name, dir string) (string, error) {
	ws, err := prompt.Open(base, prompt.Options{EstimateTokens: true})
	var agents []*prompt.Agent
	if err == nil {
		agents = ws.Agents()
	} else if !errors.Is(err, prompt.ErrNoAgent) {
		return "", fmt.Errorf("read the repository: %w", err)
	}
	count := map[string]int{}
	for _, a := range agents {
		if a.Name == name {
			return "", fmt.Errorf("agent %q is in %s: %w; choose another name", name, a.Dir, ErrExists)
		}
		if a.Dir == "." {
			return "", fmt.Errorf("%w (it has no %s): move it into a directory with an %s before summoning another", ErrRootAgent, workspace.ConfigFile, workspace.ConfigFile)
		}
		count[path.Dir(a.Dir)]++
	}
	if dir == "" {
		best := "."
		for d, n := range count {
			if n > count[best] || n == count[best] && d < best {
				best = d
			}
		}
		dir = best
	}
	dir = path.Clean(strings.Trim(dir, "/"))
	if !fs.ValidPath(dir) {
		return "", fmt.Errorf("directory %q is not a relative path in the repository", dir)
	}
	full := path.Join(dir, name)
	if _, err := fs.Stat(base, full); err == nil {
		return "", fmt.Errorf("%s exists in the repository: %w; choose another name", full, ErrExists)
	}
	return full, nil
}

// SummonMessages is the conversation a summoning sends.
func SummonMessages(name, description string) []llm.Message {
	r := strings.NewReplacer("{{NAME}}", name, "{{DESCRIPTION}}", strings.TrimSpace(description))
	return []llm.Message{{Role: "system", Content: r.Replace(summonSystem)}, {Role: "user", Content: r.Replace(summonUser)}}
}

// Summon asks m for a new agent's files and checks them on base, the
// tree they would join: a *InvalidError lists what is wrong with an
// answer that does not pass.
func Summon(ctx context.Context, m Model, base fs.FS, req SummonRequest) (*Draft, error) {
	if err := CheckName(req.Name); err != nil {
		return nil, err
	}
	if strings.TrimSpace(req.Description) == "" {
		return nil, errors.New("the description is empty: say what the agent should be")
	}
	dir, err := AgentDir(base, req.Name, req.Dir)
	if err != nil {
		return nil, err
	}
	answer, err := m.Complete(ctx, SummonMessages(req.Name, req.Description))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrModel, err)
	}
	files, probs := Parse(answer, SummonFiles)
	for _, f := range requiredFiles {
		if files[f] == nil && len(files) > 0 {
			probs = append(probs, answerProblem("the answer has no %s, which every agent needs", f))
		}
	}
	probs = append(probs, configName(files[workspace.ConfigFile], req.Name)...)
	if workspace.HasErrors(probs) {
		return nil, &InvalidError{What: "the summoned agent", Problems: probs}
	}
	d := &Draft{Dir: dir, Files: map[string][]byte{}}
	for name, b := range files {
		d.Files[path.Join(dir, name)] = b
	}
	if _, ok := files[workspace.ConfigFile]; !ok {
		// The directory is an agent by its agent.yaml.
		d.Files[path.Join(dir, workspace.ConfigFile)] = []byte{}
	}
	if d.Warnings, err = check(ctx, base, d, "the summoned agent"); err != nil {
		return nil, err
	}
	return d, nil
}

// configName refuses an agent.yaml that names the agent otherwise.
func configName(b []byte, name string) []workspace.Problem {
	if b == nil {
		return nil
	}
	cfg, _ := prompt.ParseConfig(workspace.ConfigFile, name, b)
	if cfg.Name != name {
		return []workspace.Problem{{Path: workspace.ConfigFile, Severity: workspace.SeverityError, Code: CodeAnswer,
			Message: fmt.Sprintf("name is %q, but the agent is %q: the name is not the model's to choose", cfg.Name, name)}}
	}
	return nil
}
