package skills

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/quirehq/quire/prompt"
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

	// agent is the agent workspace of a workspace tier, whose agent.yaml
	// may silence unknown-key warnings (skill_unknown_keys: ignore).
	agent fs.FS
	// disk says FS is the disk at Dir, unchanged, so files may be read
	// from Dir directly (not so for an editor overlay or a git tree).
	disk bool
	// embedded marks the built-in tier, read once per process.
	embedded bool
}

// builtinSource is the built-in tier.
func builtinSource() Source {
	return Source{Tier: TierBuiltin, FS: Builtin(), Prefix: "builtin", embedded: true}
}

// builtinTier is the built-in tier read and parsed once: the embedded
// files never change, and Skills are immutable.
var builtinTier = sync.OnceValues(func() ([]*Skill, []workspace.Problem) {
	return readTierFS(Source{Tier: TierBuiltin, FS: Builtin(), Prefix: "builtin"}, nil)
})

// location is where the prompt tells the model a skill lives. Workspace
// tiers use the path relative to the agent directory, whatever the source
// (disk, git tree, editor overlay), so the CLI, the daemon and the language
// server assemble the same bytes; the home tier uses "~/.agents/skills".
// rel is the skill's directory within the tier ("pdf", or "docs/pdf" in a
// group) and file its SKILL.md's name.
func location(src Source, rel, file string) string {
	return shownPath(locationPrefix(src), rel, file)
}

// locationPrefix is what location puts before rel.
func locationPrefix(src Source) string {
	switch src.Tier {
	case TierWorkspace:
		return "skills"
	case TierWorkspaceAgents:
		return ".agents/skills"
	case TierHome:
		return "~/.agents/skills"
	case TierManaged:
		return "managed"
	}
	return src.Prefix
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
			s := Source{Tier: t.tier, FS: sub, Prefix: t.dir, agent: ws}
			if o.WorkspaceDir != "" {
				s.Dir = filepath.Join(o.WorkspaceDir, filepath.FromSlash(t.dir))
				s.disk = o.Workspace == nil
			}
			out = append(out, s)
		}
	}
	if o.HomeDir != "" {
		dir := filepath.Join(o.HomeDir, ".agents", "skills")
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

// shownPath is path.Join(prefix, rel, file) for the names readTier
// produces (rel: one or two directory entries, file: a file name), with
// one allocation.
func shownPath(prefix, rel, file string) string {
	if prefix == "" || prefix == "." || prefix == "/" || path.Clean(prefix) != prefix {
		return path.Join(prefix, rel, file)
	}
	return prefix + "/" + rel + "/" + file
}

// diskPath is filepath.Join(dir, rel) for the names readTier produces.
func diskPath(dir, rel string) string {
	if dir == "" || dir == "." || dir == string(filepath.Separator) || filepath.Clean(dir) != dir {
		return filepath.Join(dir, filepath.FromSlash(rel))
	}
	return dir + string(filepath.Separator) + filepath.FromSlash(rel)
}

// diskFile is filepath.Join(dir, rel, file), with one allocation where
// it can.
func diskFile(dir, rel, file string) string {
	if filepath.Separator != '/' || dir == "" || dir == "." || dir == "/" || filepath.Clean(dir) != dir {
		return filepath.Join(dir, filepath.FromSlash(rel), file)
	}
	return dir + "/" + rel + "/" + file
}

// diskFileZ is diskFile with a NUL after it, for the open system call:
// one allocation, which the skill's paths are then cut from. cleanDir
// says dir is a clean path other than "", "." and "/" (diskDirClean),
// which a tier reader finds out once.
func diskFileZ(dir, rel, file string, cleanDir bool) string {
	if filepath.Separator != '/' || !cleanDir {
		return filepath.Join(dir, filepath.FromSlash(rel), file) + "\x00"
	}
	return dir + "/" + rel + "/" + file + "\x00"
}

// diskDirClean reports whether diskFile joins names to dir without
// cleaning.
func diskDirClean(dir string) bool {
	return dir != "" && dir != "." && dir != "/" && filepath.Clean(dir) == dir
}

// readTier reads every <slug>/SKILL.md of one source, and every
// <group>/<slug>/SKILL.md of a directory that has no SKILL.md itself
// (OpenClaw's grouped layout), sorted by path. A missing tier directory is
// no error and yields nothing. Where two groups hold the same slug, the
// first by path wins and the other is reported.
func readTier(src Source, access map[string]Access) ([]*Skill, []workspace.Problem) {
	if src.embedded {
		skills, probs := builtinTier()
		return slices.Clone(skills), slices.Clone(probs)
	}
	return readTierFS(src, access)
}

// readTierFS is readTier without the built-in shortcut.
func readTierFS(src Source, access map[string]Access) ([]*Skill, []workspace.Problem) {
	var entries []fs.DirEntry
	var err error
	if src.disk && haveDiskRead {
		// The same listing, read without os.File's set-up.
		entries, err = workspace.DirFS(src.Dir).ReadDir(".")
	} else {
		entries, err = fs.ReadDir(src.FS, ".")
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, []workspace.Problem{{Path: src.Prefix, Severity: workspace.SeverityError, Code: "skill-read", Message: fmt.Sprintf("read skills directory: %v", err)}}
	}
	r := tierReader{src: src, access: access, entries: len(entries)}
	// A skill's path as problems show it is the end of its path on disk
	// when the tier's directory ends in its prefix (the workspace tiers:
	// <workspace>/skills, shown as skills/...; the others show the path
	// on disk itself).
	r.dirClean = diskDirClean(src.Dir)
	r.shownInDisk = src.disk && r.dirClean && clean(src.Prefix) &&
		(src.Dir == src.Prefix || strings.HasSuffix(src.Dir, "/"+src.Prefix))
	if src.disk && haveDiskRead {
		r.buf = *readBufs.Get().(*[]byte)
		defer func() {
			if cap(r.buf) <= 64<<10 {
				buf := r.buf[:0]
				readBufs.Put(&buf)
			}
		}()
	}
	for _, e := range entries { // ReadDir sorts by name
		name := e.Name()
		if strings.HasPrefix(name, ".") || !isDir(src.FS, name, e) {
			continue
		}
		if r.read(name, name, true) {
			continue
		}
		// No SKILL.md: a group of skills, one level deep.
		sub, err := fs.ReadDir(src.FS, name)
		if err != nil {
			continue
		}
		r.groups()
		for _, se := range sub {
			rel := name + "/" + se.Name()
			if strings.HasPrefix(se.Name(), ".") || !isDir(src.FS, rel, se) {
				continue
			}
			r.read(rel, se.Name(), false)
		}
	}
	return r.out, r.probs
}

// tierReader accumulates the skills and problems of one tier.
type tierReader struct {
	src     Source
	access  map[string]Access
	entries int // in the tier's directory
	// seen maps a slug to the path of the SKILL.md that has it, once a
	// group has been met: until then every skill is in a directory of
	// its own name, and slugs cannot repeat.
	seen  map[string]string
	out   []*Skill
	probs []workspace.Problem
	buf   []byte // reused for reading from disk: the text is copied

	// texts and skills are the unused ends of the blocks the skills'
	// texts and Skills are carved from: a few allocations per tier
	// instead of two per skill. A Set keeps all its skills, so nothing is
	// held longer than it would be.
	texts  []byte
	skills []Skill

	dirClean    bool // diskDirClean(src.Dir)
	shownInDisk bool // a skill's shown path ends its path on disk
}

// groups makes seen from the skills read so far, as a group is met.
func (r *tierReader) groups() {
	if r.seen != nil {
		return
	}
	r.seen = make(map[string]string, r.entries)
	for _, s := range r.out {
		r.seen[s.Slug] = s.Path
	}
}

// text returns data as a string that lives in a block shared with the
// tier's other texts (data itself is reused).
func (r *tierReader) text(data []byte) string {
	if len(data) == 0 {
		return ""
	}
	if len(data) > cap(r.texts)-len(r.texts) {
		size := min(max(2*cap(r.texts), 2<<10), 32<<10)
		if len(data) > size/4 {
			return string(data)
		}
		r.texts = make([]byte, 0, size)
	}
	start := len(r.texts)
	r.texts = append(r.texts, data...)
	return unsafe.String(&r.texts[start], len(data))
}

// newSkill returns a zero Skill from the tier's block of them.
func (r *tierReader) newSkill() *Skill {
	if len(r.skills) == cap(r.skills) {
		r.skills = make([]Skill, 0, min(max(2*cap(r.skills), 8, r.entries-len(r.out)), 1024))
	}
	r.skills = r.skills[:len(r.skills)+1]
	return &r.skills[len(r.skills)-1]
}

// readBufs holds the buffers tier readers read SKILL.md files into (each
// text is copied out into the tier's blocks, see tierReader.text).
var readBufs = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

// clean reports whether p is a path shownPath joins without cleaning.
func clean(p string) bool {
	return p != "" && p != "." && p != "/" && path.Clean(p) == p
}

// read loads the skill in directory rel (slash path within the tier) whose
// slug is its last element. It reports whether rel holds a skill file, so a
// top-level directory without one can be read as a group.
func (r *tierReader) read(rel, slug string, top bool) bool {
	src := r.src
	file := workspace.SkillFile
	if src.disk && haveDiskRead {
		if r.buf == nil {
			r.buf = make([]byte, 0, 8<<10)
		}
		onDiskZ := diskFileZ(src.Dir, rel, file, r.dirClean)
		data, err := readDiskFile(onDiskZ, r.buf)
		if err == nil {
			r.buf = data[:0]
			// The skill's directory is the file's path without
			// "/SKILL.md", and its shown path the end of it: no second
			// string.
			onDisk := onDiskZ[:len(onDiskZ)-1]
			shown := ""
			if r.shownInDisk && filepath.Separator == '/' {
				shown = onDisk[len(onDisk)-(len(src.Prefix)+1+len(rel)+1+len(file)):]
			}
			r.parseShown(rel, slug, file, shown, data, onDisk[:len(onDisk)-len(file)-1])
			return true
		}
		if errors.Is(err, errTooLarge) {
			r.tooLarge(path.Join(src.Prefix, rel, file))
			return true
		}
		// Missing, or anything unusual: the fs.FS path below decides.
	}
	f, err := src.FS.Open(rel + "/" + file)
	if errors.Is(err, fs.ErrNotExist) {
		// skill.md, Skill.md, …: load it, and say how to name it.
		alt := r.otherCase(rel)
		if alt == "" {
			return false
		}
		if top && r.hasSkillDirs(rel) {
			return false // a group whose README-ish skill.md is not a skill
		}
		file = alt
		r.probs = append(r.probs, workspace.Problem{Path: path.Join(src.Prefix, rel, alt), Severity: workspace.SeverityWarning, Code: "skill-file-name",
			Message: fmt.Sprintf("the skill file is named %s; rename it to %s (Quire and other agents look for that exact name on case-sensitive file systems)", alt, workspace.SkillFile)})
		f, err = src.FS.Open(rel + "/" + file)
	}
	shown := path.Join(src.Prefix, rel, file)
	if err != nil {
		r.probs = append(r.probs, workspace.Problem{Path: shown, Severity: workspace.SeverityError, Code: "skill-read", Message: fmt.Sprintf("read: %v", err)})
		return true
	}
	data, err := readLimited(f)
	f.Close()
	if errors.Is(err, errTooLarge) {
		r.tooLarge(shown)
		return true
	}
	if err != nil {
		r.probs = append(r.probs, workspace.Problem{Path: shown, Severity: workspace.SeverityError, Code: "skill-read", Message: fmt.Sprintf("read: %v", err)})
		return true
	}
	r.parse(rel, slug, file, data, "")
	return true
}

func (r *tierReader) tooLarge(shown string) {
	r.probs = append(r.probs, workspace.Problem{Path: shown, Severity: workspace.SeverityError, Code: "skill-too-large",
		Message: fmt.Sprintf("SKILL.md is over %d bytes (1 MiB): move reference material into separate files next to it", MaxSkillBytes)})
}

// parse turns the skill file rel/file (slug is rel's last element) into a
// Skill, or into problems. dir is the skill's directory on disk when the
// caller has it at hand, else "".
func (r *tierReader) parse(rel, slug, file string, data []byte, dir string) {
	r.parseShown(rel, slug, file, "", data, dir)
}

// parseShown is parse with the skill's shown path at hand, or "" to make
// it.
func (r *tierReader) parseShown(rel, slug, file, shown string, data []byte, dir string) {
	src := r.src
	if shown == "" {
		shown = shownPath(src.Prefix, rel, file)
	}
	doc, p := parseText(shown, slug, r.text(data), true)
	r.probs = append(r.probs, p...)
	if hasError(p) {
		return
	}
	if r.seen != nil {
		if first, dup := r.seen[slug]; dup {
			r.probs = append(r.probs, workspace.Problem{Path: shown, Severity: workspace.SeverityWarning, Code: "skill-duplicate",
				Message: fmt.Sprintf("skill %q is also in %s, which wins (the first by path); rename one of the directories", slug, first)})
			return
		}
		r.seen[slug] = shown
	}
	switch {
	case dir != "":
	case src.Dir != "":
		dir = diskPath(src.Dir, rel)
	default:
		dir = path.Join(src.Prefix, rel)
	}
	loc := shown // the workspace tiers show the path the prompt gives
	if locationPrefix(src) != src.Prefix {
		loc = location(src, rel, file)
	}
	s := r.newSkill()
	*s = Skill{
		FrontMatter: doc.FrontMatter,
		Slug:        slug,
		Tier:        src.Tier,
		Path:        shown,
		Dir:         dir,
		Location:    loc,
		Body:        doc.Body,
		BodyLine:    doc.BodyLine,
	}
	s.Name = slug // the directory names the skill
	if src.Tier == TierManaged {
		s.Access = r.access[slug]
	}
	r.out = append(r.out, s)
}

// otherCase returns the name of a file in dir that is SKILL.md in another
// case (skill.md, Skill.md), or "".
func (r *tierReader) otherCase(dir string) string {
	entries, err := fs.ReadDir(r.src.FS, dir)
	if err != nil {
		return ""
	}
	for _, e := range entries {
		if !e.IsDir() && strings.EqualFold(e.Name(), workspace.SkillFile) {
			return e.Name()
		}
	}
	return ""
}

// hasSkillDirs reports whether some subdirectory of dir holds a SKILL.md.
func (r *tierReader) hasSkillDirs(dir string) bool {
	entries, err := fs.ReadDir(r.src.FS, dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.IsDir() {
			if _, err := fs.Stat(r.src.FS, dir+"/"+e.Name()+"/"+workspace.SkillFile); err == nil {
				return true
			}
		}
	}
	return false
}

var errTooLarge = errors.New("too large")

// readLimited reads an open skill file, refusing one over MaxSkillBytes
// without reading it.
func readLimited(f fs.File) ([]byte, error) {
	size, want := int64(512), int64(-1)
	if info, err := f.Stat(); err == nil {
		if info.Size() > MaxSkillBytes {
			return nil, errTooLarge
		}
		if info.IsDir() {
			return nil, fmt.Errorf("%s is a directory", workspace.SkillFile)
		}
		if info.Mode().IsRegular() {
			size, want = info.Size(), info.Size()
		}
	}
	buf := make([]byte, 0, size)
	for {
		if int64(len(buf)) == want { // the size Stat gave: no read for EOF
			return buf, nil
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if len(buf) > MaxSkillBytes {
			return nil, errTooLarge
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// isDir follows a symlink entry, so a skill directory may be a link.
func isDir(fsys fs.FS, name string, e fs.DirEntry) bool {
	if e.IsDir() {
		return true
	}
	if e.Type()&fs.ModeSymlink == 0 {
		return false
	}
	info, err := fs.Stat(fsys, name)
	return err == nil && info.IsDir()
}

func hasError(ps []workspace.Problem) bool {
	for _, p := range ps {
		if p.Severity == workspace.SeverityError {
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
	var winners map[string]*Skill // made once a second tier has skills
	var list []*Skill             // the winners, highest tier first, each tier in path order
	var shadows []Shadow
	var problems []workspace.Problem
	for _, src := range sorted {
		tier, probs := readTier(src, access)
		problems = append(problems, probs...)
		if len(tier) == 0 {
			continue
		}
		if list == nil { // the first tier with skills: its slugs are unique
			list = tier
			continue
		}
		if winners == nil {
			winners = make(map[string]*Skill, len(list)+len(tier))
			for _, s := range list {
				winners[s.Slug] = s
			}
		}
		for _, s := range tier {
			if w, ok := winners[s.Slug]; ok {
				shadows = append(shadows, Shadow{Slug: s.Slug, Winner: w.Path, WinnerTier: w.Tier, Shadowed: s.Path, ShadowedTier: s.Tier})
				continue
			}
			winners[s.Slug] = s
			list = append(list, s)
		}
	}
	problems = quietUnknownKeys(sorted, problems)
	if list == nil {
		list = []*Skill{}
	}
	// Nearly sorted already (a tier's skills come in path order).
	slices.SortFunc(list, func(a, b *Skill) int { return strings.Compare(a.Slug, b.Slug) })
	sort.SliceStable(shadows, func(i, j int) bool { return shadows[i].Slug < shadows[j].Slug })
	return newSet(version, list, shadows, problems)
}

// quietUnknownKeys drops the unknown-key warnings when the agent workspace
// of the sources says skill_unknown_keys: ignore in its agent.yaml. The
// file is read only when there is a warning to drop.
func quietUnknownKeys(sources []Source, problems []workspace.Problem) []workspace.Problem {
	var agent fs.FS
	for _, src := range sources {
		if src.agent != nil {
			agent = src.agent
			break
		}
	}
	if agent == nil || !slices.ContainsFunc(problems, func(p workspace.Problem) bool { return p.Code == codeUnknownKey }) {
		return problems
	}
	data, err := fs.ReadFile(agent, workspace.ConfigFile)
	if err != nil {
		return problems
	}
	if cfg, _ := prompt.ParseConfig(workspace.ConfigFile, "", data); cfg.SkillUnknownKeys != prompt.SkillKeysIgnore {
		return problems
	}
	return slices.DeleteFunc(problems, func(p workspace.Problem) bool { return p.Code == codeUnknownKey })
}

// Check loads the sources and returns every SKILL.md problem plus a warning
// per shadowed skill, sorted by path and line: what `quire check` reports.
func Check(sources []Source) []workspace.Problem {
	set := Load(0, sources, nil)
	out := append([]workspace.Problem(nil), set.Problems()...)
	for _, sh := range set.Shadows() {
		out = append(out, workspace.Problem{Path: sh.Shadowed, Line: 0, Severity: workspace.SeverityWarning, Code: "skill-shadowed", Message: fmt.Sprintf("skill %q is shadowed by %s (%s tier)", sh.Slug, sh.Winner, sh.WinnerTier)})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Line < out[j].Line
	})
	return out
}
