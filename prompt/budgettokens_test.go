package prompt

import (
	"fmt"
	"strings"
	"testing"

	"github.com/quirehq/quire/workspace"
)

// TestTokenBudget: with budget.unit tokens every limit holds in exact
// o200k tokens of what is injected (marker included), the marker still
// states the chars kept, clamping and dropping follow the total in
// tokens, and the reject policy counts tokens.
func TestTokenBudget(t *testing.T) {
	long := func(word string, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "Line %d: the %s keeps the keys of every room in the drawer.\n", i, word)
		}
		return b.String()
	}
	files := map[string]string{
		workspace.AgentsFile: long("porter", 60),
		workspace.SoulFile:   long("concierge", 60),
		workspace.ToolsFile:  long("cook", 60),
	}
	tok := NewTokenizer()
	for _, c := range []struct{ yaml string }{
		{"budget: {unit: tokens, per_file: 300, total: 500, min_file: 40}\n"},
		{"budget: {unit: tokens, per_file: 90, total: 1000, min_file: 1}\npolicy: reject\n"},
		{"budget: {unit: tokens, per_file: 5000, total: 700}\n"},
	} {
		t.Run(c.yaml, func(t *testing.T) {
			w := openMap(t, files, c.yaml)
			res := assemble(t, w, Request{})
			b := res.Report.Budget
			if b.Unit != UnitTokens {
				t.Fatalf("unit %q", b.Unit)
			}
			sum := 0
			for _, f := range res.Report.Files {
				if f.Status == StatusMissing || f.Status == StatusDropped {
					continue
				}
				body := injectedBody(t, res.Prompt, f.Name)
				n := tok.Count(body)
				if n != f.InjectedTokens || n > f.LimitTokens || n > b.PerFileTokens {
					t.Errorf("%s: %d tokens injected, report says %d, limit %d, per file %d", f.Name, n, f.InjectedTokens, f.LimitTokens, b.PerFileTokens)
				}
				if f.Status != StatusFull && !strings.Contains(body, fmt.Sprintf("(%s: kept %s + %s of %s chars)", f.Name, GroupThousands(f.HeadChars), GroupThousands(f.TailChars), GroupThousands(f.OriginalChars))) {
					t.Errorf("%s: marker does not state the chars kept:\n%s", f.Name, body)
				}
				sum += n
			}
			if sum != res.Report.InjectedTokens || sum > b.TotalTokens || res.Report.RemainingTokens != b.TotalTokens-sum {
				t.Fatalf("injected %d tokens, report %d, total %d, remaining %d", sum, res.Report.InjectedTokens, b.TotalTokens, res.Report.RemainingTokens)
			}
			if reject := strings.Contains(c.yaml, "reject"); reject != (len(res.Report.Problems) == 3) {
				t.Fatalf("reject policy problems: %v", res.Report.Problems)
			}
			for _, p := range res.Report.Problems {
				if !strings.Contains(p.Message, " tokens; the per-file budget is "+GroupThousands(b.PerFileTokens)+" and ") || !strings.HasSuffix(p.Message, " tokens") {
					t.Errorf("a reject in tokens says: %s", p.Message)
				}
			}
		})
	}
	w := openMap(t, files, "budget: {unit: tokens, per_file: 300, total: 500, min_file: 40}\n")
	rep := assemble(t, w, Request{}).Report
	tools, _ := rep.File(workspace.ToolsFile)
	if tools.Status != StatusDropped || !strings.Contains(tools.Note, "tokens of the total budget of 500 were left (less than the minimum of 40)") {
		t.Fatalf("TOOLS.md after the total in tokens is used up: %+v", tools)
	}
}

// injectedBody is what the prompt holds of the context file name.
func injectedBody(t *testing.T, prompt, name string) string {
	t.Helper()
	open := "<context_file name=\"" + name + "\">\n"
	i := strings.Index(prompt, open)
	if i < 0 {
		t.Fatalf("%s is not in the prompt", name)
	}
	rest := prompt[i+len(open):]
	return strings.TrimSuffix(rest[:strings.Index(rest, "</context_file>")], "\n")
}

// TestContextWindow: a request's context window scales the total to
// its share in tokens, per-file and minimum keep their proportions, and
// a bad window or share is a bad request.
func TestContextWindow(t *testing.T) {
	w := openMap(t, map[string]string{workspace.SoulFile: strings.Repeat("word ", 4000)}, "budget: {context_share: 0.5}\n")
	res := assemble(t, w, Request{ContextWindow: 2000})
	b := res.Report.Budget
	if b.Unit != UnitTokens || b.TotalTokens != 1000 || b.PerFileTokens != 833 || b.MinFileTokens != 3 || res.Report.ContextWindow != 2000 {
		t.Fatalf("scaled budget %+v (window %d)", b, res.Report.ContextWindow)
	}
	if f, _ := res.Report.File(workspace.SoulFile); f.Status != StatusTruncated || f.InjectedTokens > 833 {
		t.Fatalf("SOUL.md under the scaled budget: %+v", f)
	}
	if res := assemble(t, w, Request{ContextWindow: 2000, ContextShare: 0.1}); res.Report.Budget.TotalTokens != 200 {
		t.Fatalf("a request's share: total %d", res.Report.Budget.TotalTokens)
	}
	if res := assemble(t, w, Request{}); res.Report.Budget.Unit != UnitChars || res.Report.ContextWindow != 0 {
		t.Fatalf("without a window the agent's budget holds: %+v", res.Report.Budget)
	}
	for _, req := range []Request{{ContextWindow: -5}, {ContextWindow: 1000, ContextShare: 1.5}, {ContextShare: 0.3}} {
		if _, err := w.Assemble(req); err == nil {
			t.Errorf("%+v: no error", req)
		}
	}
}

// TestTokenBudgetLargeFile: a file too large to read whole (only its head
// and tail are read) is cut within what was read, under a budget in
// tokens, with a marker that states the chars kept.
func TestTokenBudgetLargeFile(t *testing.T) {
	big := strings.Repeat("The porter keeps the keys of every room in the drawer by the door.\n", (workspace.MaxFileBytes/67)+2000)
	w := openMap(t, map[string]string{workspace.SoulFile: big}, "budget: {unit: tokens, per_file: 3000, total: 4000}\n")
	res := assemble(t, w, Request{})
	f, _ := res.Report.File(workspace.SoulFile)
	body := injectedBody(t, res.Prompt, workspace.SoulFile)
	if n := NewTokenizer().Count(body); f.Status != StatusTruncated || !f.OriginalTokensEstimated || n != f.InjectedTokens || n > 3000 ||
		!strings.Contains(body, fmt.Sprintf("kept %s + %s of %s chars", GroupThousands(f.HeadChars), GroupThousands(f.TailChars), GroupThousands(f.OriginalChars))) {
		t.Fatalf("a large file under a budget in tokens: %d tokens injected, report %+v", n, f)
	}
}

// TestExcerptTokens: what a cut file injects is counted from its
// original's index (only around the marker), exactly as counting the
// injected text counts it, under budgets in chars and in tokens, for
// text of any script, line endings and runs of white space.
func TestExcerptTokens(t *testing.T) {
	var b strings.Builder
	for i := range 400 {
		fmt.Fprintf(&b, "Line %d: Lúcia's KEYS are in the drawer 🗝️  中文 العربية\t%d\r\n\n   ÉTÉ ſ'S it'LL\n", i, i*i)
	}
	soul := b.String()
	ref := NewTokenizer()
	for _, yaml := range []string{
		"budget: {per_file: 1000, total: 30000}\n",
		"budget: {per_file: 9000, total: 9500}\n",
		"budget: {per_file: 20000, total: 30000, head_ratio: 0.5, tail_ratio: 0.5}\n",
		"budget: {unit: tokens, per_file: 700, total: 5000}\n",
		"budget: {unit: tokens, per_file: 4000, total: 4100}\n",
	} {
		w := openMap(t, map[string]string{workspace.SoulFile: soul, workspace.AgentsFile: soul[:3000]}, yaml)
		res := assemble(t, w, Request{})
		bud := res.Report.Budget
		for _, f := range res.Report.Files {
			if f.Status != StatusTruncated && f.Status != StatusClamped {
				continue
			}
			content := strings.ReplaceAll(soul, "\r\n", "\n")[:f.OriginalBytes] // as the workspace reads it
			body, _ := Truncate(f.Name, content, f.LimitChars, bud.HeadRatio, bud.TailRatio)
			if n := ref.Count(body); n != f.InjectedTokens || !strings.Contains(res.Prompt, body) {
				t.Errorf("%s %s: %d tokens injected, report says %d", yaml, f.Name, n, f.InjectedTokens)
			}
		}
		if len(w.cache.indexes) == 0 {
			t.Errorf("%s: no file was indexed", yaml)
		}
	}
}

// TestOnlyFilesIndexed: a context file's count keeps its index (its
// excerpts are counted from it), a text counted otherwise (a whole
// prompt, an excerpt) keeps none, and a count already taken is not
// counted again.
func TestOnlyFilesIndexed(t *testing.T) {
	tk := NewTokenizer()
	text := strings.Repeat("Lúcia keeps the KEYS in the drawer.\n", 100)
	n := tk.Count(text)
	if len(tk.indexes) != 0 {
		t.Fatalf("Count kept %d indexes, want none", len(tk.indexes))
	}
	key := contentKey(tk.seed, text+" ")
	if got := tk.countFile(key, text+" "); got < n {
		t.Errorf("countFile = %d, less than the %d of a shorter text", got, n)
	}
	if len(tk.indexes) != 1 || tk.indexes[key] == nil {
		t.Errorf("countFile kept %d indexes, want the file's", len(tk.indexes))
	}
}
