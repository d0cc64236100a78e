package memory_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/workspace"
)

// TestDocumentsSkipUnstorable: a memory file no store can hold (a NUL or
// another control character, invalid UTF-8, a control character in its
// name or in its user's id) got past the rules — pushed before them, or in
// a --dir working tree. It is left out with an error naming it, and every
// other document is returned.
func TestDocumentsSkipUnstorable(t *testing.T) {
	fsys := fstest.MapFS{
		"bot/MEMORY.md":                        {Data: []byte("# Memory\n\nThe wifi password is on the fridge.\n")},
		"bot/memory/2026-01-01.md":             {Data: []byte("# 2026-01-01\n\n## 09:00\n\nThe boiler was serviced.\n")},
		"bot/memory/2026-01-02.md":             {Data: []byte("# 2026-01-02\n\n## 10:00\n\nMet Ana\x00 today\n")},
		"bot/memory/crlf.md":                   {Data: []byte("Tabs\tand\r\nCRLF are fine.\r\n")},
		"bot/memory/latin1.md":                 {Data: []byte("caf\xe9\n")},
		"bot/memory/bad\x01dir/x.md":           {Data: []byte("below a bad directory\n")},
		"bot/memory/bell\x07.md":               {Data: []byte("a bad name\n")},
		"bot/users/alice/MEMORY.md":            {Data: []byte("Alice drinks green tea.\n")},
		"bot/users/alice/memory/2026-01-02.md": {Data: []byte("line one\nAlice \x1b[31m red\n")},
		"bot/users/a%00b/MEMORY.md":            {Data: []byte("a NUL in the user id\n")},
		"bot/users/Alice/MEMORY.md":            {Data: []byte("a hand-made directory\n")},
	}
	docs, problems, err := memory.Documents(fsys, "bot")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range docs {
		got = append(got, d.User+":"+d.Path)
	}
	want := []string{":MEMORY.md", ":memory/2026-01-01.md", ":memory/crlf.md", "alice:MEMORY.md"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("documents %q, want %q", got, want)
	}
	wantProblems := []string{
		`memory/2026-01-02.md:5:8: error: not indexed: holds the control character U+0000 at byte 31: context files must be printable text (tab, CR and LF are allowed); remove it`,
		`memory/bad␁dir: error: not indexed: the name "memory/bad\x01dir" holds a control character (U+0001 at byte 10): names must be printable text; rename it`,
		`memory/bell␇.md: error: not indexed: the name "memory/bell\a.md" holds a control character (U+0007 at byte 11): names must be printable text; rename it`,
		`memory/latin1.md:1: error: not indexed: not valid UTF-8 (first bad byte at offset 3); context files must be UTF-8 text: re-save the file as UTF-8`,
		`users/Alice: warning: not a user directory, skipped: bad id: "Alice" contains "A", which EncodeID never produces`,
		`users/a%00b: error: not indexed: the directory's user id holds a control character U+0000 at byte 1: it must be printable, without any control character`,
		`users/alice/memory/2026-01-02.md:2:7: error: not indexed: holds the control character U+001B at byte 15: context files must be printable text (tab, CR and LF are allowed); remove it`,
	}
	var gotProblems []string
	for _, p := range problems {
		gotProblems = append(gotProblems, p.String())
		if p.Severity == workspace.SeverityError && p.Code != memory.CodeNotIndexed {
			t.Errorf("%s: code %q, want %q", p.Path, p.Code, memory.CodeNotIndexed)
		}
	}
	if strings.Join(gotProblems, "\n") != strings.Join(wantProblems, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(gotProblems, "\n"), strings.Join(wantProblems, "\n"))
	}
}
