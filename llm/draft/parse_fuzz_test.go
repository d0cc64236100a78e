package draft_test

import (
	"strings"
	"testing"

	"github.com/quirehq/quire/llm/draft"
)

// FuzzParse: whatever a model answers, Parse neither panics nor returns
// a file it was not asked for, and every file ends in one newline.
func FuzzParse(f *testing.F) {
	f.Add(goodSummon)
	f.Add("<file path=\"SOUL.md\">```\nx\n```</file><file path='x'>")
	f.Add("<file path=\"SOUL.md\"></file><file path=\"SOUL.md\">again</file>")
	f.Fuzz(func(t *testing.T, answer string) {
		files, probs := draft.Parse(answer, draft.SummonFiles)
		for name, b := range files {
			found := false
			for _, a := range draft.SummonFiles {
				found = found || a == name
			}
			if !found {
				t.Fatalf("Parse returned %q, which was not asked for", name)
			}
			if !strings.HasSuffix(string(b), "\n") || strings.HasSuffix(string(b), "\n\n") {
				t.Fatalf("%s = %q: want one final newline", name, b)
			}
		}
		if len(files) == 0 && len(probs) == 0 {
			t.Fatal("no files and no problem")
		}
	})
}
