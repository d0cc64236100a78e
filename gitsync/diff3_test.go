package gitsync

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/quirehq/quire/internal/testenv"
)

func TestMerge3(t *testing.T) {
	t.Parallel()
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

// FuzzMerge3 checks the merge against git merge-file (its default
// diff, no configuration) and its invariants on any input: it never
// panics; it merges cleanly exactly when git does, and then into git's
// bytes; a clean merge of one-sided changes is that side; merging a text
// with itself is the text; without conflicts every line the merge keeps
// comes from one of the inputs. Texts with a NUL byte are not compared
// with git's merge: git refuses them as binary, and mergeTrees never
// merges them by line. (Files a MergePolicy combines, daily logs, never
// reach Merge3.)
func FuzzMerge3(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("a\nB\nc\n"), []byte("a\nb\nC\n"))
	f.Add([]byte(""), []byte("x"), []byte("y\n"))
	f.Add([]byte("a\n\n\nb"), []byte("\n"), []byte("a\nb\nb\n"))
	// Where the diff can place a change in more than one way: git puts
	// ours' "a" after the "a" of base, next to theirs' deletion, which
	// conflicts (the diff3 before merged it).
	f.Add([]byte("a\nb\n"), []byte("a\na\nb\n"), []byte("a\n"))
	f.Add([]byte("a\nb\na\nb\n"), []byte("a\nb\na\nb\na\nb\n"), []byte("a\nb\nX\nb\n"))
	f.Add([]byte("x\n\n\ny\n\n\nz\n"), []byte("x\n\n\ny\n\n\n\nz\n"), []byte("x\n\nY\n\n\nz\n"))
	// Lines with many matches amid lines with none (set aside by git).
	f.Add([]byte("}\n}\n}\na\n}\nb\n}\n"), []byte("}\nc\n}\nd\n}\ne\n}\n"), []byte("}\n}\n}\na\n}\nb\n}\nf\n"))
	// The same change on both sides, next to a change of one.
	f.Add([]byte("1\n2\n3\n4\n"), []byte("1\nX\n3\n4\n"), []byte("1\nX\nY\n4\n"))
	f.Fuzz(func(t *testing.T, base, ours, theirs []byte) {
		got, cs := Merge3(base, ours, theirs)
		if !slices.ContainsFunc([][]byte{base, ours, theirs}, func(b []byte) bool { return bytes.IndexByte(b, 0) >= 0 }) {
			want, clean := gitMergeFile(t, base, ours, theirs)
			switch {
			case clean != (len(cs) == 0):
				t.Fatalf("git merges cleanly: %v; Merge3 conflicts: %v\nbase %q\nours %q\ntheirs %q", clean, cs, base, ours, theirs)
			case clean && !bytes.Equal(got, want):
				t.Fatalf("merged %q, git merged %q\nbase %q\nours %q\ntheirs %q", got, want, base, ours, theirs)
			}
		}
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

// gitMergeFile merges as git merge-file -p does, outside any repository
// and configuration (merge.conflictStyle=diff3 would merge less), and
// reports whether the merge is clean.
func gitMergeFile(t testing.TB, base, ours, theirs []byte) (merged []byte, clean bool) {
	t.Helper()
	dir := t.TempDir()
	for name, b := range map[string][]byte{"base": base, "ours": ours, "theirs": theirs} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("git", "merge-file", "-p", "-L", "ours", "-L", "base", "-L", "theirs", "ours", "base", "theirs")
	cmd.Dir = dir
	cmd.Env = append(testenv.GitEnv(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out, true
	case errors.As(err, &exit) && exit.ExitCode() > 0 && exit.ExitCode() < 128 && stderr.Len() == 0:
		return out, false // the number of conflicts
	}
	t.Fatalf("git merge-file: %v: %s", err, stderr.String())
	return nil, false
}

// TestMerge3StepBound: what bounds a merge is a number of steps, not a
// time: given exactly the steps its two diffs take, a merge is clean;
// given one fewer, the whole file is one conflict; and the outcome is
// the same every time, on a busy machine too.
func TestMerge3StepBound(t *testing.T) {
	t.Parallel()
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
