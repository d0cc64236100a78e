package prompt

import (
	"fmt"
	"math"

	"gopkg.in/yaml.v3"
)

// BudgetUnit is what a budget counts: chars (code points) or tokens.
type BudgetUnit string

// Budget units.
const (
	UnitChars  BudgetUnit = "chars"
	UnitTokens BudgetUnit = "tokens"
)

// Defaults of a budget in tokens (budget.unit: tokens): the char
// defaults at four chars a token.
const (
	DefaultPerFileTokens = 5000
	DefaultTotalTokens   = 6000
	DefaultMinFileTokens = 16
	// DefaultContextShare is the share of a request's context window the
	// context files may take when neither the request nor agent.yaml says.
	DefaultContextShare = 0.25
)

// PerFile is the per-file budget in b's unit.
func (b *Budget) PerFile() int {
	if b.Unit == UnitTokens {
		return b.PerFileTokens
	}
	return b.PerFileChars
}

// Total is the total budget in b's unit.
func (b *Budget) Total() int {
	if b.Unit == UnitTokens {
		return b.TotalTokens
	}
	return b.TotalChars
}

// MinFile is the minimum file budget in b's unit.
func (b *Budget) MinFile() int {
	if b.Unit == UnitTokens {
		return b.MinFileTokens
	}
	return b.MinFileChars
}

// UnitName is the unit as reports print it ("chars" when unset).
func (b *Budget) UnitName() string {
	if b.Unit == UnitTokens {
		return string(UnitTokens)
	}
	return string(UnitChars)
}

// windowChars is how many code points of head and of tail a file too
// large to read whole must keep for any cut this budget can ask for.
func (b *Budget) windowChars() int {
	if b.Unit == UnitTokens {
		// A token of o200k_base is rarely more than a few chars; long
		// runs of one char can make more, and cut a little early.
		return 16 * b.PerFileTokens
	}
	return b.PerFileChars
}

// ScaleToWindow returns b scaled to a model whose context window holds
// window tokens: the total becomes share of it (0: b's context_share, else
// DefaultContextShare), in tokens, and the per-file and minimum budgets
// keep their proportion to the total.
func (b Budget) ScaleToWindow(window int, share float64) (Budget, error) {
	if window <= 0 {
		return b, fmt.Errorf("context_window must be a positive number of tokens, not %d", window)
	}
	if share == 0 {
		share = b.ContextShare
	}
	if share == 0 {
		share = DefaultContextShare
	}
	if !(share > 0 && share <= 1) {
		return b, fmt.Errorf("context_share must be above 0 and at most 1, not %g", share)
	}
	total := int(math.Floor(float64(window) * share))
	if total < 1 {
		return b, fmt.Errorf("context_share %g of a context window of %d tokens leaves no token for the context files", share, window)
	}
	scale := func(n int) int { return int(math.Round(float64(n) * float64(total) / float64(b.Total()))) }
	out := b
	out.Unit, out.ContextShare = UnitTokens, share
	out.PerFileTokens, out.MinFileTokens, out.TotalTokens = max(1, min(total, scale(b.PerFile()))), scale(b.MinFile()), total
	return out, nil
}

// parseBudgetUnit reads budget.unit (before the sizes, whose unit it is)
// and, for tokens, puts the token defaults in place.
func parseBudgetUnit(v *yaml.Node, b *Budget, report reportFunc) {
	for i := 0; i+1 < len(v.Content); i += 2 {
		if k := v.Content[i]; k.Kind == yaml.ScalarNode && k.Value == "unit" {
			unit := b.Unit
			parseEnum(v.Content[i+1], report, "budget.unit", "agent-yaml-value", []BudgetUnit{UnitChars, UnitTokens}, &unit)
			if unit == UnitTokens && b.Unit != UnitTokens {
				b.PerFileTokens, b.TotalTokens, b.MinFileTokens = DefaultPerFileTokens, DefaultTotalTokens, DefaultMinFileTokens
			}
			b.Unit = unit
			return
		}
	}
}

// setBudgetTokens sets the size in tokens budget.key gives.
func setBudgetTokens(key string, n int, b *Budget) {
	switch key {
	case "per_file":
		b.PerFileTokens = n
	case "total":
		b.TotalTokens = n
	case "min_file":
		b.MinFileTokens = n
	}
}

// parseContextShare reads budget.context_share (0 < share ≤ 1).
func parseContextShare(val *yaml.Node, b *Budget, report reportFunc) {
	var f float64
	if !decodeScalar(val, &f, report, "budget.context_share") {
		return
	}
	if !(f > 0 && f <= 1) {
		report(val.Line, val.Column, "agent-yaml-range", "budget.context_share must be above 0 and at most 1, not %g", f)
		return
	}
	b.ContextShare = f
}

// In returns f's sizes in the unit of budget b: the original, what was
// injected, and what the total had left when its turn came.
func (f *FileReport) In(b *Budget) (original, injected, remainingBefore int) {
	if b.Unit == UnitTokens {
		return f.OriginalTokens, f.InjectedTokens, f.RemainingBeforeTokens
	}
	return f.OriginalChars, f.InjectedChars, f.RemainingBeforeChars
}

// InjectedIn is what the context files injected, and RemainingIn what
// the total has left, in the unit of the report's budget.
func (r *Report) InjectedIn() int {
	if r.Budget.Unit == UnitTokens {
		return r.InjectedTokens
	}
	return r.InjectedChars
}

// RemainingIn is what the total budget has left, in its unit.
func (r *Report) RemainingIn() int {
	if r.Budget.Unit == UnitTokens {
		return r.RemainingTokens
	}
	return r.RemainingChars
}
