package skills

import (
	"fmt"
	"strings"
)

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
