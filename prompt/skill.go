package prompt

// Skill is one skill as the Skills section of the system prompt shows it.
// The skills package decides which skills a request may see and hands them
// to Assemble in this form; prompt only decides whether to list them inline
// or to point the model at skill search.
type Skill struct {
	// Name is the skill's slug, e.g. "pdf-to-markdown".
	Name string
	// Description says when to use the skill (≤ 1,024 chars).
	Description string
	// Location is where the model can read the full SKILL.md.
	Location string
}

// Inline-listing limits from the skills specification: at most this many
// skills, whose names and descriptions together estimate at most
// InlineSkillTokens tokens (chars / 4), are listed in <available_skills>.
const (
	InlineSkillCount  = 20
	InlineSkillTokens = 3500
)
