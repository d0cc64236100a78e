package daemon

import (
	"context"
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/quirehq/quire/gitsync"
	"github.com/quirehq/quire/prompt"
)

// checkedWrite runs the checks of a write of content to p (checked) on
// fsys for ref, and returns the error's text ("" for none).
func checkedWrite(wr *writer, ref agentRef, fsys fs.FS, p string, content []byte) string {
	build := func(fs.FS) ([]gitsync.FileWrite, error) {
		return []gitsync.FileWrite{{Path: p, Content: content}}, nil
	}
	_, err := wr.checked(context.Background(), ref, build)(fsys)
	if err != nil {
		return err.Error()
	}
	return ""
}

// FuzzCheckedTail: a write that extends a text that passed the checks
// (only its tail scanned) is answered exactly as a write of the same
// content checked whole: the same refusal, in the same words, or none.
func FuzzCheckedTail(f *testing.F) {
	for _, s := range [][2]string{
		{"# 2026-03-01\n", "\n## 09:00\n\nfine\n"},
		{"a\n", "\x01"},
		{"ab", "\x00c"},
		{"line\nmore", " text\x7f\n"},
		{"x\xc3\xa9", "\xa9"},
		{"x\xc3", "\xa9"},
		{"bad\x02\n", "fine\n"},
		{"", "\xff"},
		{"\t\r\n", "\r\n\t"},
	} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, base, add []byte) {
		const p = "memory/2026-03-01.md"
		a := &prompt.Agent{Name: "bot", Dir: ".", Config: prompt.DefaultConfig("bot")}
		fsys := fstest.MapFS{"agent.yaml": {Data: []byte("name: bot\n")}, p: {Data: base}}
		wr := &writer{tokens: prompt.NewTokenizer()}
		whole := agentRef{ag: &deployedAgent{agent: a}, src: &source{}}
		extended := agentRef{ag: &deployedAgent{agent: a}, src: &source{}}
		content := append(append([]byte(nil), base...), add...)
		want := checkedWrite(wr, whole, fsys, p, content)
		first := checkedWrite(wr, extended, fsys, p, base)
		n, _ := extended.src.writes.checked.checked(p, content)
		tailed := n > 0
		if tailed != (first == "" && len(base) > 0) {
			t.Fatalf("base %q passed: %v, but its extension is checked by its tail: %v", base, first == "", tailed)
		}
		if got := checkedWrite(wr, extended, fsys, p, content); got != want {
			t.Fatalf("base %q + %q: checked by its tail %q, whole %q", base, add, got, want)
		}
	})
}

// BenchmarkCheckedAppend is the checks of an append to a 20 KB daily
// log: whole (the log not known as checked) or its tail (the log as the
// last append left it, which passed).
func BenchmarkCheckedAppend(b *testing.B) {
	const p = "memory/2026-03-01.md"
	var log []byte
	for len(log) < 20_000 {
		log = append(log, "\n## 09:00\n\n**User:** u0001\n\nsomething worth keeping in mind\n"...)
	}
	a := &prompt.Agent{Name: "bot", Dir: ".", Config: prompt.DefaultConfig("bot")}
	fsys := fstest.MapFS{"agent.yaml": {Data: []byte("name: bot\n")}, p: {Data: log}}
	wr := &writer{tokens: prompt.NewTokenizer()}
	content := append(append([]byte(nil), log...), "\n## 09:01\n\nmore\n"...)
	for _, tailed := range []bool{false, true} {
		b.Run(map[bool]string{false: "whole", true: "tail"}[tailed], func(b *testing.B) {
			for range b.N {
				ref := agentRef{ag: &deployedAgent{agent: a}, src: &source{}}
				if tailed {
					_, fp := ref.src.writes.checked.checked(p, log)
					ref.src.writes.checked.passed(p, fp)
				}
				if err := checkedWrite(wr, ref, fsys, p, content); err != "" {
					b.Fatal(err)
				}
			}
		})
	}
}
