package prompt

import "github.com/quirehq/quire/workspace"

// Status says what happened to a context file.
type Status string

// File statuses (behavior.md §3).
const (
	StatusFull      Status = "full"      // injected whole
	StatusTruncated Status = "truncated" // cut to the per-file budget
	StatusClamped   Status = "clamped"   // cut further to what the total budget had left
	StatusDropped   Status = "dropped"   // not injected: the total budget was used up
	StatusEmpty     Status = "empty"     // exists but holds only white space
	StatusMissing   Status = "missing"   // does not exist
)

// Position is a place in a file: a byte offset and the 1-based line and
// column (in code points) it falls on. Column is 0 when unknown (inside a
// file too large to read whole).
type Position struct {
	Offset int64 `json:"offset"`
	Line   int   `json:"line"`
	Column int   `json:"column"`
}

// Range is a half-open span [Start, End) of a file.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Lines is the first and last line the range covers, as reports print
// them: a range that ends at the start of a line (column 1) does not cover
// that line.
func (r Range) Lines() (first, last int) {
	first, last = r.Start.Line, r.End.Line
	if r.End.Column == 1 && last > first {
		last--
	}
	return first, last
}

// FileReport is what happened to one context file.
type FileReport struct {
	// Name is how the prompt names the file; Path is where it was read.
	Name string `json:"name"`
	Path string `json:"path,omitempty"`
	// User is set when the file is a user's own copy.
	User   string `json:"user,omitempty"`
	Status Status `json:"status"`
	// Order is the file's 1-based position in the order files are charged
	// against the total budget.
	Order int `json:"order"`

	OriginalBytes  int64 `json:"original_bytes"`
	OriginalChars  int   `json:"original_chars"`
	OriginalTokens int   `json:"original_tokens"`
	// OriginalTokensEstimated is set for files over MaxFileBytes, which are
	// never read whole, and for every file of a workspace opened with
	// Options.EstimateTokens: their token counts are chars/4.
	OriginalTokensEstimated bool `json:"original_tokens_estimated,omitempty"`
	InjectedChars           int  `json:"injected_chars"`
	InjectedTokens          int  `json:"injected_tokens"`
	// LimitChars is the limit the file was held to: the per-file budget, or
	// what the total budget had left when that was less.
	LimitChars int `json:"limit_chars"`
	// RemainingBeforeChars is what the total budget had left when this
	// file's turn came (a budget in chars).
	RemainingBeforeChars int `json:"remaining_before_chars"`
	// RemainingBeforeTokens is the same for a budget in tokens.
	RemainingBeforeTokens int `json:"remaining_before_tokens,omitempty"`
	// LimitTokens is LimitChars of a budget in tokens: the limit in tokens
	// the file was held to (LimitChars is then the chars the cut allowed).
	LimitTokens int `json:"limit_tokens,omitempty"`
	// HeadChars and TailChars are what a truncated or clamped file kept.
	HeadChars int `json:"head_chars,omitempty"`
	TailChars int `json:"tail_chars,omitempty"`
	// Dropped lists the ranges of the original that did not reach the prompt.
	Dropped []Range `json:"dropped,omitempty"`
	// UsedBy names the earlier files that used up the total budget, for a
	// clamped or dropped file.
	UsedBy []string `json:"used_by,omitempty"`
	// InvalidBytes counts bytes that were not UTF-8 and became U+FFFD.
	InvalidBytes int `json:"invalid_bytes,omitempty"`
	// OverBudget is set when the file exceeds the per-file budget under the
	// reject policy: an error, not just a cut.
	OverBudget bool `json:"over_budget,omitempty"`
	// Note says in a sentence what happened and why.
	Note string `json:"note,omitempty"`
}

// Report is what an assembly injected, cut and dropped. The CLI, the daemon
// and the language server all show this same report. Reports share their
// Files slice with the workspace's cache: treat them as read-only.
type Report struct {
	Agent     string    `json:"agent"`
	User      string    `json:"user,omitempty"`
	Session   Session   `json:"session"`
	Mode      Mode      `json:"mode,omitempty"` // set when the request names one
	Channel   Channel   `json:"channel"`
	Room      string    `json:"room,omitempty"`
	AgentType AgentType `json:"agent_type"`
	Policy    Policy    `json:"policy"`
	Budget    Budget    `json:"budget"`
	Tokenizer string    `json:"tokenizer"`

	Files []FileReport `json:"files"`
	// Virtual names the virtual files rendered in <system_context>.
	Virtual []string `json:"virtual,omitempty"`

	// InjectedChars and InjectedTokens sum the context files' injected sizes;
	// RemainingChars is what the total budget has left.
	InjectedChars  int `json:"injected_chars"`
	InjectedTokens int `json:"injected_tokens"`
	RemainingChars int `json:"remaining_chars"`
	// RemainingTokens is what a total budget in tokens has left.
	RemainingTokens int `json:"remaining_tokens,omitempty"`
	// ContextWindow is the request's context window in tokens when the
	// budget was scaled to it (Budget.ContextShare of it), 0 otherwise.
	ContextWindow int `json:"context_window,omitempty"`

	// SkillsMode is "inline", "search" or "none"; SkillCount how many
	// skills the request could see.
	SkillsMode string `json:"skills_mode"`
	SkillCount int    `json:"skill_count"`
	// SkillsReason says why the skills were or were not listed inline
	// (which skills the inline rule counted, against which limits); empty
	// when the prompt has no Skills section.
	SkillsReason string `json:"skills_reason,omitempty"`

	PromptBytes int `json:"prompt_bytes"`
	PromptChars int `json:"prompt_chars"`
	// PromptTokens is counted only when the request asks for it.
	PromptTokens int `json:"prompt_tokens,omitempty"`
	// StablePrefixBytes is the length of the start of the prompt that does
	// not depend on the user, the time or extra context: the part a model
	// provider can cache between requests.
	StablePrefixBytes int `json:"stable_prefix_bytes"`

	// Problems are errors the assembly found, such as files over budget
	// under the reject policy.
	Problems []workspace.Problem `json:"problems,omitempty"`
}

// File returns the report of the file called name, if the session saw it.
func (r *Report) File(name string) (FileReport, bool) {
	for _, f := range r.Files {
		if f.Name == name {
			return f, true
		}
	}
	return FileReport{}, false
}
