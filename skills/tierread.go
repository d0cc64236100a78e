package skills

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"

	"github.com/quirehq/quire/workspace"
)

// CodeRead is the code of the problem of a skill or skills directory that
// cannot be read (agent.Check reports such a file once, by the file rules).
const CodeRead = "skill-read"

// readTier reads every <slug>/SKILL.md of one source, and every
// <group>/<slug>/SKILL.md of a directory that has no SKILL.md itself
// (OpenClaw's grouped layout), sorted by path. A missing tier directory is
// no error and yields nothing. Where two groups hold the same slug, the
// first by path wins and the other is reported.
func readTier(src Source) ([]*Skill, []workspace.Problem) {
	if src.embedded {
		skills, probs := builtinTier()
		return slices.Clone(skills), slices.Clone(probs)
	}
	return readTierFS(src)
}

// readTierFS is readTier without the built-in shortcut.
func readTierFS(src Source) ([]*Skill, []workspace.Problem) {
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
		return nil, []workspace.Problem{{Path: src.Prefix, Severity: workspace.SeverityError, Code: CodeRead, Message: fmt.Sprintf("read skills directory: %v", err)}}
	}
	r := tierReader{src: src, entries: len(entries)}
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

// read loads the skill in directory rel (slash path within the tier) whose
// slug is its last element. It reports whether rel holds a skill file, so a
// top-level directory without one can be read as a group.
func (r *tierReader) read(rel, slug string, top bool) bool {
	if r.src.disk && haveDiskRead && r.readDisk(rel, slug) {
		return true
	}
	return r.readFS(rel, slug, top)
}

// readDisk reads rel's SKILL.md from the disk with readDiskFile. It
// reports whether that settled the skill (read, or too large); a missing
// file, or anything unusual, is left to readFS.
func (r *tierReader) readDisk(rel, slug string) bool {
	src := r.src
	file := workspace.SkillFile
	if r.buf == nil {
		r.buf = make([]byte, 0, 8<<10)
	}
	onDiskZ := diskFileZ(src.Dir, rel, file, r.dirClean)
	data, err := readDiskFile(onDiskZ, r.buf, src.noLinks)
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
	return false
}

// readFS is read through the tier's fs.FS, which also finds a skill file
// named in another case.
func (r *tierReader) readFS(rel, slug string, top bool) bool {
	src := r.src
	file := workspace.SkillFile
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
		r.probs = append(r.probs, workspace.Problem{Path: shown, Severity: workspace.SeverityError, Code: CodeRead, Message: fmt.Sprintf("read: %v", err)})
		return true
	}
	data, err := readLimited(f)
	f.Close()
	if errors.Is(err, errTooLarge) {
		r.tooLarge(shown)
		return true
	}
	if err != nil {
		r.probs = append(r.probs, workspace.Problem{Path: shown, Severity: workspace.SeverityError, Code: CodeRead, Message: fmt.Sprintf("read: %v", err)})
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
	if src.Shared {
		s.Access = Access{Visibility: doc.Visibility, Grant: src.Grants[slug]}
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
