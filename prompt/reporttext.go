package prompt

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText writes the report as a table for people: one row per context
// file with its status and sizes, what was cut, and the totals.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	r.writeHeading(&b)
	r.writeFileTable(&b)
	fmt.Fprintln(&b)
	r.writeFileNotes(&b)
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "%s\n", p)
	}
	r.writeTotals(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeHeading writes who the prompt is for and the budget it was held to.
func (r *Report) writeHeading(b *strings.Builder) {
	who := ""
	if r.User != "" {
		who = fmt.Sprintf(" · user %s", r.User)
	}
	if r.Room != "" {
		who += fmt.Sprintf(" · room %s", r.Room)
	}
	session := string(r.Session)
	if r.Mode != "" {
		session += " · mode " + string(r.Mode)
	}
	fmt.Fprintf(b, "agent %s (%s, policy %s) · session %s · channel %s%s\n", r.Agent, r.AgentType, r.Policy, session, r.Channel, who)
	window := ""
	if r.ContextWindow > 0 {
		window = fmt.Sprintf(" (%.0f %% of a context window of %s tokens)", 100*r.Budget.ContextShare, GroupThousands(r.ContextWindow))
	}
	fmt.Fprintf(b, "budget: %s %s per file · %s total%s · stop below %s · head %.0f %% · tail %.0f %% · tokens: %s\n\n",
		GroupThousands(r.Budget.PerFile()), r.Budget.UnitName(), GroupThousands(r.Budget.Total()), window, GroupThousands(r.Budget.MinFile()),
		100*r.Budget.HeadRatio, 100*r.Budget.TailRatio, r.Tokenizer)
}

// writeFileTable writes a table row per context file: its status, its
// size and what of it was injected.
func (r *Report) writeFileTable(b *strings.Builder) {
	tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tfile\tstatus\tchars\tinjected\ttokens\tinjected")
	for _, f := range r.Files {
		name := f.Name
		if f.User != "" {
			name += " (user)"
		}
		tok := GroupThousands(f.OriginalTokens)
		if f.OriginalTokensEstimated {
			tok = "~" + tok
		}
		if f.Status == StatusMissing {
			fmt.Fprintf(tw, "%d\t%s\t%s\t-\t-\t-\t-\n", f.Order, name, f.Status)
			continue
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", f.Order, name, f.Status,
			GroupThousands(f.OriginalChars), GroupThousands(f.InjectedChars), tok, GroupThousands(f.InjectedTokens))
	}
	tw.Flush()
}

// writeFileNotes writes a line per file the budget cut and per file with
// invalid UTF-8.
func (r *Report) writeFileNotes(b *strings.Builder) {
	for _, f := range r.Files {
		switch f.Status {
		case StatusTruncated, StatusClamped, StatusDropped:
			fmt.Fprintf(b, "%s: %s", f.Name, f.Note)
			if len(f.Dropped) > 0 {
				d := f.Dropped[0]
				first, last := d.Lines()
				fmt.Fprintf(b, "; cut lines %d–%d (bytes %d–%d)", first, last, d.Start.Offset, d.End.Offset)
			}
			if len(f.UsedBy) > 0 && f.Status != StatusTruncated {
				fmt.Fprintf(b, "; the total was used by %s", strings.Join(f.UsedBy, ", "))
			}
			fmt.Fprintln(b)
		}
		if f.InvalidBytes > 0 {
			fmt.Fprintf(b, "%s: %d bytes of invalid UTF-8 shown as U+FFFD\n", f.Name, f.InvalidBytes)
		}
	}
}

// writeTotals writes the sizes of the context files and of the prompt, and
// how the skills were given.
func (r *Report) writeTotals(b *strings.Builder) {
	if r.Budget.Unit == UnitTokens {
		fmt.Fprintf(b, "context files: %s of %s tokens (%s left) · %s chars\n",
			GroupThousands(r.InjectedTokens), GroupThousands(r.Budget.TotalTokens), GroupThousands(r.RemainingTokens), GroupThousands(r.InjectedChars))
	} else {
		fmt.Fprintf(b, "context files: %s of %s chars (%s left) · %s tokens\n",
			GroupThousands(r.InjectedChars), GroupThousands(r.Budget.TotalChars), GroupThousands(r.RemainingChars), GroupThousands(r.InjectedTokens))
	}
	if len(r.Virtual) > 0 {
		fmt.Fprintf(b, "virtual files (not charged to the budget): %s\n", strings.Join(r.Virtual, ", "))
	}
	fmt.Fprintf(b, "prompt: %s chars · %s bytes", GroupThousands(r.PromptChars), GroupThousands(r.PromptBytes))
	if r.PromptTokens > 0 {
		fmt.Fprintf(b, " · %s tokens", GroupThousands(r.PromptTokens))
	}
	fmt.Fprintf(b, " · stable prefix %s bytes · skills: %s", GroupThousands(r.StablePrefixBytes), r.SkillsMode)
	if r.SkillCount > 0 {
		fmt.Fprintf(b, " (%d)", r.SkillCount)
	}
	fmt.Fprintln(b)
	if r.SkillsReason != "" {
		fmt.Fprintf(b, "skills %s\n", r.SkillsReason)
	}
}
