package skills

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
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

// MaxSkillBytes bounds a SKILL.md file; a larger one is an error and is
// not read.
const MaxSkillBytes = 1 << 20

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
}

// location is where the prompt tells the model a skill lives. Workspace
// tiers use the path relative to the agent directory, whatever the source
// (disk, git tree, editor overlay), so the CLI, the daemon and the language
// server assemble the same bytes; the home tier uses "~/.agents/skills".
func location(src Source, slug string) string {
	switch src.Tier {
	case TierWorkspace:
		return path.Join("skills", slug, "SKILL.md")
	case TierWorkspaceAgents:
		return path.Join(".agents/skills", slug, "SKILL.md")
	case TierHome:
		return path.Join("~/.agents/skills", slug, "SKILL.md")
	case TierManaged:
		return path.Join("managed", slug, "SKILL.md")
	}
	return path.Join(src.Prefix, slug, "SKILL.md")
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
	// Access gives the access record of a managed skill by slug; skills
	// without an entry, and every skill outside the managed tier, are
	// public.
	Access map[string]Access
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

// Sources returns the tiers that o names, highest first.
func (o Options) Sources() []Source {
	var out []Source
	ws := o.Workspace
	if ws == nil && o.WorkspaceDir != "" {
		ws = os.DirFS(o.WorkspaceDir)
	}
	if ws != nil {
		for _, t := range []struct {
			tier Tier
			dir  string
		}{{TierWorkspace, "skills"}, {TierWorkspaceAgents, ".agents/skills"}} {
			sub, err := fs.Sub(ws, t.dir)
			if err != nil {
				continue
			}
			s := Source{Tier: t.tier, FS: sub, Prefix: t.dir}
			if o.WorkspaceDir != "" {
				s.Dir = filepath.Join(o.WorkspaceDir, filepath.FromSlash(t.dir))
			}
			out = append(out, s)
		}
	}
	if o.HomeDir != "" {
		dir := filepath.Join(o.HomeDir, ".agents", "skills")
		out = append(out, Source{Tier: TierHome, FS: os.DirFS(dir), Prefix: dir, Dir: dir})
	}
	if o.ManagedDir != "" {
		out = append(out, Source{Tier: TierManaged, FS: os.DirFS(o.ManagedDir), Prefix: o.ManagedDir, Dir: o.ManagedDir})
	}
	if !o.NoBuiltin {
		out = append(out, Source{Tier: TierBuiltin, FS: Builtin(), Prefix: "builtin"})
	}
	return out
}

// Skill is one loaded skill. Skills are immutable once loaded.
type Skill struct {
	FrontMatter
	// Slug is the skill's directory name, which equals its name.
	Slug string
	Tier Tier
	// Path is the SKILL.md as problems name it (see Problem.Path).
	Path string
	// Dir is the skill's directory: absolute on disk, or Source.Prefix +
	// "/" + slug for sources not on disk. {baseDir} becomes Dir.
	Dir string
	// Location is where the model can read the full SKILL.md.
	Location string
	// Body is the text after the front matter, {baseDir} not replaced.
	Body string
	// BodyLine is the line of SKILL.md that Body starts on.
	BodyLine int
	// Access says who may see the skill.
	Access Access
}

// ResolvedBody returns the body with every {baseDir} replaced by the skill's
// directory. The front matter is never rewritten.
func (s *Skill) ResolvedBody() string {
	return strings.ReplaceAll(s.Body, "{baseDir}", s.Dir)
}

// Shadow records a skill hidden by one of the same slug in a higher tier.
type Shadow struct {
	Slug string `json:"slug"`
	// Winner is the path of the SKILL.md in effect, Shadowed the hidden one.
	Winner       string `json:"winner"`
	WinnerTier   Tier   `json:"winner_tier"`
	Shadowed     string `json:"shadowed"`
	ShadowedTier Tier   `json:"shadowed_tier"`
}

// String says which file hides which, as check and the CLI print it.
func (s Shadow) String() string {
	return fmt.Sprintf("%s (%s) is shadowed by %s (%s)", s.Shadowed, s.ShadowedTier, s.Winner, s.WinnerTier)
}

// readTier reads every <slug>/SKILL.md of one source, sorted by slug. A
// missing tier directory is no error and yields nothing.
func readTier(src Source, access map[string]Access) ([]*Skill, []Problem) {
	entries, err := fs.ReadDir(src.FS, ".")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, []Problem{{Path: src.Prefix, Severity: Error, Code: "skill-read", Message: fmt.Sprintf("read skills directory: %v", err)}}
	}
	var out []*Skill
	var probs []Problem
	for _, e := range entries { // ReadDir sorts by name
		slug := e.Name()
		if strings.HasPrefix(slug, ".") || !isDir(src.FS, e) {
			continue
		}
		file := path.Join(slug, "SKILL.md")
		shown := path.Join(src.Prefix, file)
		info, err := fs.Stat(src.FS, file)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a directory without SKILL.md is not a skill (yet)
		}
		if err == nil && info.Size() > MaxSkillBytes {
			probs = append(probs, Problem{Path: shown, Severity: Error, Code: "skill-too-large",
				Message: fmt.Sprintf("SKILL.md is %d bytes; the limit is %d (1 MiB): move reference material into separate files next to it", info.Size(), MaxSkillBytes)})
			continue
		}
		data, err := fs.ReadFile(src.FS, file)
		if err != nil {
			probs = append(probs, Problem{Path: shown, Severity: Error, Code: "skill-read", Message: fmt.Sprintf("read: %v", err)})
			continue
		}
		doc, p := ParseDocument(shown, slug, data)
		probs = append(probs, p...)
		if hasError(p) {
			continue
		}
		dir := path.Join(src.Prefix, slug)
		if src.Dir != "" {
			dir = filepath.Join(src.Dir, slug)
		}
		s := &Skill{
			FrontMatter: doc.FrontMatter,
			Slug:        slug,
			Tier:        src.Tier,
			Path:        shown,
			Dir:         dir,
			Location:    location(src, slug),
			Body:        doc.Body,
			BodyLine:    doc.BodyLine,
		}
		if src.Tier == TierManaged {
			s.Access = access[slug]
		}
		out = append(out, s)
	}
	return out, probs
}

// isDir follows a symlink entry, so a skill directory may be a link.
func isDir(fsys fs.FS, e fs.DirEntry) bool {
	if e.IsDir() {
		return true
	}
	if e.Type()&fs.ModeSymlink == 0 {
		return false
	}
	info, err := fs.Stat(fsys, e.Name())
	return err == nil && info.IsDir()
}

func hasError(ps []Problem) bool {
	for _, p := range ps {
		if p.Severity == Error {
			return true
		}
	}
	return false
}

// Load reads every source (highest tier first) and resolves overrides into
// an immutable Set with the given version. Problems of every file, the
// shadowed ones included, are kept in the Set.
func Load(version uint64, sources []Source, access map[string]Access) *Set {
	sorted := append([]Source(nil), sources...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Tier < sorted[j].Tier })
	winners := map[string]*Skill{}
	var shadows []Shadow
	var problems []Problem
	for _, src := range sorted {
		tier, probs := readTier(src, access)
		problems = append(problems, probs...)
		for _, s := range tier {
			if w, ok := winners[s.Slug]; ok {
				shadows = append(shadows, Shadow{Slug: s.Slug, Winner: w.Path, WinnerTier: w.Tier, Shadowed: s.Path, ShadowedTier: s.Tier})
				continue
			}
			winners[s.Slug] = s
		}
	}
	list := make([]*Skill, 0, len(winners))
	for _, s := range winners {
		list = append(list, s)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Slug < list[j].Slug })
	sort.SliceStable(shadows, func(i, j int) bool { return shadows[i].Slug < shadows[j].Slug })
	return newSet(version, list, shadows, problems)
}

// Check loads the sources and returns every SKILL.md problem plus a warning
// per shadowed skill, sorted by path and line: what `quire check` reports.
func Check(sources []Source) []Problem {
	set := Load(0, sources, nil)
	out := append([]Problem(nil), set.Problems()...)
	for _, sh := range set.Shadows() {
		out = append(out, Problem{Path: sh.Shadowed, Line: 0, Severity: Warning, Code: "skill-shadowed", Message: fmt.Sprintf("skill %q is shadowed by %s (%s tier)", sh.Slug, sh.Winner, sh.WinnerTier)})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Line < out[j].Line
	})
	return out
}
