package prompt

import "fmt"

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
	// Builtin marks one of Quire's built-in skills, which the inline rule
	// does not count.
	Builtin bool
}

// Inline-listing limits from the skills specification: at most this many
// skills, whose names and descriptions together estimate at most
// InlineSkillTokens tokens (chars / 4), are listed in <available_skills>.
//
// Built-in skills are not counted: the limits bound the agent's own
// catalogue (its workspace, home and managed skills), and Quire's few
// built-ins are listed along with them whenever those fit. So a workspace
// of 20 skills still lists its skills inline, with the built-ins (23
// entries); a workspace of 21 points the model at skill search, which
// finds the built-ins too.
const (
	InlineSkillCount  = 20
	InlineSkillTokens = 3500
)

// skillsDecision is how the inline rule decided for a request's skills.
type skillsDecision struct {
	inline           bool
	counted, builtin int // skills counted, built-in skills not counted
	tokens           int // estimated tokens of the counted skills
}

// decideSkills applies the inline rule (behavior.md §5) to skills.
func decideSkills(skills []Skill) skillsDecision {
	var d skillsDecision
	chars := 0
	for _, s := range skills {
		if s.Builtin {
			d.builtin++
			continue
		}
		d.counted++
		n, _ := countChars(s.Name)
		m, _ := countChars(s.Description)
		chars += n + m
	}
	d.tokens = chars / 4
	d.inline = d.counted <= InlineSkillCount && d.tokens <= InlineSkillTokens
	return d
}

// reason says in words why the skills were or were not listed inline.
func (d skillsDecision) reason() string {
	builtins := ""
	if d.builtin > 0 {
		builtins = fmt.Sprintf(" (+%d built-in, not counted)", d.builtin)
	}
	noun := "skills"
	if d.counted == 1 {
		noun = "skill"
	}
	counts := fmt.Sprintf("%d %s%s", d.counted, noun, builtins)
	switch {
	case d.inline:
		return fmt.Sprintf("listed inline: %s ≤ %d and ~%s est. tokens ≤ %s",
			counts, InlineSkillCount, GroupThousands(d.tokens), GroupThousands(InlineSkillTokens))
	case d.counted > InlineSkillCount:
		return fmt.Sprintf("skill search: %s > %d", counts, InlineSkillCount)
	default:
		return fmt.Sprintf("skill search: %s with ~%s est. tokens > %s",
			counts, GroupThousands(d.tokens), GroupThousands(InlineSkillTokens))
	}
}
