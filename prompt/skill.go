package prompt

import "strconv"

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
	b := make([]byte, 0, 96)
	switch {
	case d.inline:
		b = append(b, "listed inline: "...)
	default:
		b = append(b, "skill search: "...)
	}
	b = strconv.AppendInt(b, int64(d.counted), 10)
	if d.counted == 1 {
		b = append(b, " skill"...)
	} else {
		b = append(b, " skills"...)
	}
	if d.builtin > 0 {
		b = append(b, " (+"...)
		b = strconv.AppendInt(b, int64(d.builtin), 10)
		b = append(b, " built-in, not counted)"...)
	}
	switch {
	case d.inline:
		b = append(b, " ≤ "...)
		b = strconv.AppendInt(b, InlineSkillCount, 10)
		b = append(b, " and ~"...)
		b = appendGrouped(b, d.tokens)
		b = append(b, " est. tokens ≤ "...)
		b = appendGrouped(b, InlineSkillTokens)
	case d.counted > InlineSkillCount:
		b = append(b, " > "...)
		b = strconv.AppendInt(b, InlineSkillCount, 10)
	default:
		b = append(b, " with ~"...)
		b = appendGrouped(b, d.tokens)
		b = append(b, " est. tokens > "...)
		b = appendGrouped(b, InlineSkillTokens)
	}
	return string(b)
}
