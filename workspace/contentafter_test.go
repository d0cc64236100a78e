package workspace

import "testing"

// FuzzCheckContentAfter: content that extends a text that passed the
// rule on content, scanned after that text only, gets exactly what
// CheckContent says of it whole: the same problem, at the same line and
// column, or none.
func FuzzCheckContentAfter(f *testing.F) {
	for _, s := range [][2]string{
		{"# 2026-03-01\n", "\n## 09:00\n\nfine\n"},
		{"a\n", "\x01"},
		{"line one\nline two", " more\x7f\n"},
		{"x\xc3\xa9", "\xa9"},
		{"é\n", "\xc3"},
		{"", "\xff"},
		{"\t\r\n", "\r\n\t"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, base, add string) {
		const p = "memory/2026-03-01.md"
		if _, bad := CheckContent(p, []byte(base)); bad {
			return // only a text that passed is a checked prefix
		}
		b := []byte(base + add)
		want, wantBad := CheckContent(p, b)
		got, gotBad := CheckContentAfter(p, b, len(base))
		if got != want || gotBad != wantBad {
			t.Fatalf("%q + %q: after the base %v %+v, whole %v %+v", base, add, gotBad, got, wantBad, want)
		}
	})
}

// TestCheckContentAfterScansOnlyTheRest: the checked prefix is not
// scanned again (a caller vouches for it), and a problem after it is
// placed in the whole content.
func TestCheckContentAfterScansOnlyTheRest(t *testing.T) {
	const p = "memory/log.md"
	if _, bad := CheckContentAfter(p, []byte("bad\x01\nfine\n"), len("bad\x01\n")); bad {
		t.Error("a problem in the checked prefix was found: the prefix was scanned again")
	}
	prob, bad := CheckContentAfter(p, []byte("one\ntwo\nth\x02ree\n"), len("one\n"))
	if !bad || prob.Line != 3 || prob.Column != 3 || prob.Code != CodeControlChar {
		t.Errorf("a control character on line 3, column 3: got %v %+v", bad, prob)
	}
}
