package gitsync

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestMerge3(t *testing.T) {
	base := "a\nb\nc\nd\ne\n"
	for _, tc := range []struct {
		name          string
		ours, theirs  string
		want          string
		conflicts     int
		theirsConflct LineRange
	}{
		{name: "only ours", ours: "a\nB\nc\nd\ne\n", theirs: base, want: "a\nB\nc\nd\ne\n"},
		{name: "only theirs", ours: base, theirs: "a\nb\nc\nD\ne\n", want: "a\nb\nc\nD\ne\n"},
		{name: "different lines", ours: "a\nB\nc\nd\ne\n", theirs: "a\nb\nc\nD\ne\n", want: "a\nB\nc\nD\ne\n"},
		{name: "same change", ours: "a\nX\nc\nd\ne\n", theirs: "a\nX\nc\nd\ne\n", want: "a\nX\nc\nd\ne\n"},
		{name: "both append differently", ours: base + "o\n", theirs: base + "t\n", want: base + "o\n", conflicts: 1, theirsConflct: LineRange{6, 6}},
		{name: "insert at start and end", ours: "0\n" + base, theirs: base + "f\n", want: "0\n" + base + "f\n"},
		{name: "same line differently", ours: "a\nb\nC1\nd\ne\n", theirs: "a\nb\nC2\nd\ne\n", want: "a\nb\nC1\nd\ne\n", conflicts: 1, theirsConflct: LineRange{3, 3}},
		{name: "delete vs change elsewhere", ours: "a\nc\nd\ne\n", theirs: "a\nb\nc\nd\nE\n", want: "a\nc\nd\nE\n"},
		{name: "no final newline", ours: "a\nb\nc\nd\ne", theirs: "A\nb\nc\nd\ne\n", want: "A\nb\nc\nd\ne"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, cs := Merge3([]byte(base), []byte(tc.ours), []byte(tc.theirs))
			if len(cs) != tc.conflicts {
				t.Fatalf("conflicts %+v, want %d", cs, tc.conflicts)
			}
			if tc.conflicts > 0 && cs[0].Theirs != tc.theirsConflct {
				t.Errorf("theirs' conflict lines %+v, want %+v", cs[0].Theirs, tc.theirsConflct)
			}
			if string(got) != tc.want {
				t.Errorf("merged %q, want %q", got, tc.want)
			}
		})
	}
}

// FuzzMerge3 checks the merge's invariants on any input: it never
// panics; a clean merge of one-sided changes is that side; merging a text
// with itself is the text; without conflicts every line the merge keeps
// comes from one of the inputs.
func FuzzMerge3(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("a\nB\nc\n"), []byte("a\nb\nC\n"))
	f.Add([]byte(""), []byte("x"), []byte("y\n"))
	f.Add([]byte("a\n\n\nb"), []byte("\n"), []byte("a\nb\nb\n"))
	f.Fuzz(func(t *testing.T, base, ours, theirs []byte) {
		got, cs := Merge3(base, ours, theirs)
		if m, c := Merge3(base, ours, base); len(c) != 0 || !bytes.Equal(m, ours) {
			t.Fatalf("theirs unchanged: got %q %v, want ours %q", m, c, ours)
		}
		if m, c := Merge3(base, base, theirs); len(c) != 0 || !bytes.Equal(m, theirs) {
			t.Fatalf("ours unchanged: got %q %v, want theirs %q", m, c, theirs)
		}
		if m, c := Merge3(base, ours, ours); len(c) != 0 || !bytes.Equal(m, ours) {
			t.Fatalf("same sides: got %q %v", m, c)
		}
		if len(cs) == 0 {
			all := map[string]bool{}
			for _, s := range [][]byte{base, ours, theirs} {
				for _, l := range splitLines(s) {
					all[l] = true
				}
			}
			for _, l := range splitLines(got) {
				if !all[l] {
					t.Fatalf("merged line %q is in no input", l)
				}
			}
		}
	})
}

// TestMerge3StepBound: what bounds a merge is a number of steps, not a
// time: given exactly the steps its two diffs take, a merge is clean;
// given one fewer, the whole file is one conflict; and the outcome is
// the same every time, on a busy machine too.
func TestMerge3StepBound(t *testing.T) {
	var base, ours, theirs strings.Builder
	for i := range 3000 {
		line := fmt.Sprintf("line %d\n", i%700) // lines that repeat
		base.WriteString(line)
		switch {
		case i%97 == 5:
			ours.WriteString("ours " + line)
		case i%97 == 50:
			theirs.WriteString("theirs " + line)
		}
		if i%97 != 5 {
			ours.WriteString(line)
		}
		if i%97 != 50 {
			theirs.WriteString(line)
		}
	}
	b, o, th := []byte(base.String()), []byte(ours.String()), []byte(theirs.String())
	classes := lineClasses(splitLines(b), splitLines(o), splitLines(th))
	left := 1 << 40
	for _, side := range classes[1:] {
		if _, ok := lineDiff(classes[0], side, &left); !ok {
			t.Fatal("no diff")
		}
	}
	need := 1<<40 - left
	want, cs := Merge3(b, o, th)
	if len(cs) != 0 {
		t.Fatalf("Merge3 conflicts: %v", cs)
	}
	whole := []TextConflict{{Base: LineRange{1, 3000}, Ours: LineRange{1, 3000}, Theirs: LineRange{1, 3000}}}
	var wg sync.WaitGroup
	for range 4 * runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for range 5 {
				if got, cs := merge3(b, o, th, need); len(cs) != 0 || !bytes.Equal(got, want) {
					t.Errorf("with the %d steps it takes: conflicts %v", need, cs)
				}
				if got, cs := merge3(b, o, th, need-1); !slices.Equal(cs, whole) || !bytes.Equal(got, o) {
					t.Errorf("with %d steps, one fewer than it takes: conflicts %v, want the whole file", need-1, cs)
				}
			}
		})
	}
	wg.Wait()
	t.Logf("the merge takes %d steps", need)
}
