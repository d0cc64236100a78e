package skills

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sync"

	"github.com/quirehq/quire/workspace"
)

// Tier is where a skill comes from. Lower values win: a slug in a higher
// tier (smaller number) overrides the same slug in every lower tier.
type Tier int

// The five tiers of behavior.md §5, highest first.
const (
	TierWorkspace       Tier = 1 // skills/ in the agent workspace
	TierWorkspaceAgents Tier = 2 // .agents/skills/ in the agent workspace
	TierHome            Tier = 3 // ~/.agents/skills/
	TierManaged         Tier = 4 // the daemon's managed skills directory
	TierBuiltin         Tier = 5 // embedded in the binary
)

// String names the tier as the CLI shows it.
func (t Tier) String() string {
	switch t {
	case TierWorkspace:
		return "workspace"
	case TierWorkspaceAgents:
		return "workspace-agents"
	case TierHome:
		return "home"
	case TierManaged:
		return "managed"
	case TierBuiltin:
		return "builtin"
	}
	return fmt.Sprintf("tier-%d", int(t))
}

// MarshalText makes tiers appear by name in JSON.
func (t Tier) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// Source is one tier's skills directory, read through an fs.FS whose root
// holds <slug>/SKILL.md.
type Source struct {
	Tier Tier
	FS   fs.FS
	// Prefix is prepended to paths in problems and, when Dir is empty, in
	// locations: "skills", ".agents/skills", an absolute path, "builtin".
	Prefix string
	// Dir is the absolute directory of FS on disk, or "" when the source
	// is not on disk (a git tree, the embedded built-ins). {baseDir} and
	// Location use it when set.
	Dir string
	// Shared marks the shared skills repository: its skills' visibility
	// (front matter) and Grants (its grants file) decide who sees them.
	// In every other source, every skill is public.
	Shared bool
	// Grants are the shared repository's grants by skill slug.
	Grants map[string]Grant

	// agent is the agent workspace of a workspace tier, whose agent.yaml
	// may silence unknown-key warnings (skill_unknown_keys: ignore).
	agent fs.FS
	// disk says FS is the disk at Dir, unchanged, so files may be read
	// from Dir directly (not so for an editor overlay or a git tree).
	disk bool
	// noLinks says a SKILL.md that is a symbolic link is not followed:
	// a workspace's tiers read nothing from outside it (the home and
	// managed tiers are the user's own, and may link).
	noLinks bool
	// embedded marks the built-in tier, read once per process.
	embedded bool
}

// Options says where the five tiers are. Only non-empty fields are read.
type Options struct {
	// Workspace is the agent workspace (root = the directory holding
	// agent.yaml); tiers 1 and 2 are its skills/ and .agents/skills/. When
	// nil and WorkspaceDir is set, the disk directory is used.
	Workspace fs.FS
	// WorkspaceDir is the agent workspace's absolute directory on disk, if
	// it has one; it resolves {baseDir} and locations. The Watcher watches
	// its skills/ and .agents/skills/ only when Workspace is nil (the
	// workspace is then read from this directory).
	WorkspaceDir string
	// HomeDir is the user's home directory; tier 3 is HomeDir/.agents/skills.
	// The package never reads $HOME itself.
	HomeDir string
	// ManagedDir is the daemon's managed skills directory (tier 4).
	ManagedDir string
	// NoBuiltin leaves out the built-in skills (tier 5).
	NoBuiltin bool
}

// workspaceTiers are the two workspace tiers (skills/, .agents/skills/)
// of the agent at agentDir of tree, whose own file system is agent.
// diskRoot, when set, is tree's directory on disk: each tier names its
// directory there, and is read from the disk directly when disk.
func workspaceTiers(tree fs.FS, agentDir string, agent fs.FS, diskRoot string, disk bool) []Source {
	var out []Source
	for _, t := range [...]struct {
		tier Tier
		dir  string
	}{{TierWorkspace, workspace.SkillsDir}, {TierWorkspaceAgents, workspace.AgentSkillsDir}} {
		p := path.Join(agentDir, t.dir)
		sub, err := fs.Sub(tree, p)
		if err != nil {
			continue
		}
		s := Source{Tier: t.tier, FS: sub, Prefix: p, agent: agent}
		if diskRoot != "" {
			s.Dir, s.disk, s.noLinks = filepath.Join(diskRoot, filepath.FromSlash(p)), disk, true
		}
		out = append(out, s)
	}
	return out
}

// Sources returns the tiers that o names, highest first.
func (o Options) Sources() []Source {
	var out []Source
	ws := o.Workspace
	if ws == nil && o.WorkspaceDir != "" {
		ws = workspace.DirFS(o.WorkspaceDir)
	}
	if ws != nil {
		out = workspaceTiers(ws, ".", ws, o.WorkspaceDir, o.Workspace == nil)
	}
	if o.HomeDir != "" {
		dir := filepath.Join(o.HomeDir, filepath.FromSlash(workspace.AgentSkillsDir))
		out = append(out, Source{Tier: TierHome, FS: os.DirFS(dir), Prefix: dir, Dir: dir, disk: true})
	}
	if o.ManagedDir != "" {
		out = append(out, Source{Tier: TierManaged, FS: os.DirFS(o.ManagedDir), Prefix: o.ManagedDir, Dir: o.ManagedDir, disk: true})
	}
	if !o.NoBuiltin {
		out = append(out, builtinSource())
	}
	return out
}

//go:embed builtin
var builtinFS embed.FS

// Builtin returns the built-in skills as an fs.FS holding <slug>/SKILL.md.
func Builtin() fs.FS {
	sub, err := fs.Sub(builtinFS, "builtin")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return sub
}

// builtinSource is the built-in tier.
func builtinSource() Source {
	return Source{Tier: TierBuiltin, FS: Builtin(), Prefix: "builtin", embedded: true}
}

// builtinTier is the built-in tier read and parsed once: the embedded
// files never change, and Skills are immutable.
var builtinTier = sync.OnceValues(func() ([]*Skill, []workspace.Problem) {
	return readTierFS(Source{Tier: TierBuiltin, FS: Builtin(), Prefix: "builtin"})
})
