package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

// benchServer is a server rooted at the example workspace (two agents, users,
// daily logs, skills) with a 100 KB SOUL.md open in the editor.
func benchServer(b *testing.B) (*server, uri.URI, []string) {
	b.Helper()
	root, err := filepath.Abs("../examples")
	if err != nil {
		b.Fatal(err)
	}
	s := newServer(Options{Root: root})
	close(s.initDone)
	soul := uri.File(filepath.Join(root, "agents/concierge/SOUL.md"))
	// Two 100 KB versions that differ, so every edit changes the budget.
	base := longText(100 * 1024 / 2) // about two bytes per char
	for len(base) < 100*1024 {
		base += "more words\n"
	}
	texts := []string{base, strings.Replace(base, "soul", "SOUL", 1)}
	ctx := context.Background()
	if err := s.DidOpen(ctx, &protocol.DidOpenTextDocumentParams{TextDocument: protocol.TextDocumentItem{URI: soul, LanguageID: "markdown", Version: 1, Text: texts[0]}}); err != nil {
		b.Fatal(err)
	}
	agents := uri.File(filepath.Join(root, "agents/concierge/AGENTS.md"))
	if err := s.DidOpen(ctx, &protocol.DidOpenTextDocumentParams{TextDocument: protocol.TextDocumentItem{URI: agents, LanguageID: "markdown", Version: 1, Text: "# Agents\n"}}); err != nil {
		b.Fatal(err)
	}
	if d := s.diagnose(s.currentView())[soul]; len(d) == 0 {
		b.Fatal("the 100 KB SOUL.md has no diagnostic")
	}
	return s, soul, texts
}

func edit(b *testing.B, s *server, u uri.URI, version int32, text string) {
	err := s.DidChange(context.Background(), &protocol.DidChangeTextDocumentParams{
		TextDocument:   protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: u}, Version: version},
		ContentChanges: []protocol.TextDocumentContentChangeEvent{&protocol.TextDocumentContentChangeWholeDocument{Text: text}},
	})
	if err != nil {
		b.Fatal(err)
	}
}

// didChange → diagnostics computed (the debounce excluded): target ≤ 20 ms.
func BenchmarkDiagnoseAfterChange(b *testing.B) {
	s, soul, texts := benchServer(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		edit(b, s, soul, int32(i+2), texts[i%2])
		// The warning and the faded cut (a hint).
		if d := s.diagnose(s.currentView()); len(d[soul]) != 2 {
			b.Fatalf("got %d diagnostics", len(d[soul]))
		}
	}
}

// The preview after an edit: target ≤ 10 ms.
func BenchmarkPreviewAfterChange(b *testing.B) {
	s, soul, texts := benchServer(b)
	args := PreviewArgs{Agent: "concierge", User: "ines.carvalho", URI: string(soul)}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		edit(b, s, soul, int32(i+2), texts[i%2])
		if res, err := s.preview(args); err != nil || res.Prompt == "" {
			b.Fatal(err)
		}
	}
}

// The preview refreshed with no edit in between (the quire-prompt: document
// re-rendering, the status bar).
func BenchmarkPreviewUnchanged(b *testing.B) {
	s, soul, _ := benchServer(b)
	args := PreviewArgs{Agent: "concierge", User: "ines.carvalho", URI: string(soul)}
	if _, err := s.preview(args); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.preview(args); err != nil {
			b.Fatal(err)
		}
	}
}

// Memory over 10,000 edits of the 100 KB SOUL.md, diagnosing after every
// tenth as the debounce would: the live heap after 1,000 and after 10,000
// edits should be the same (reported as heap-MB-1k and heap-MB-10k).
func BenchmarkTenThousandEdits(b *testing.B) {
	for n := 0; n < b.N; n++ {
		s, soul, texts := benchServer(b)
		var at1k float64
		for i := 0; i < 10000; i++ {
			edit(b, s, soul, int32(i+2), texts[i%2])
			if i%10 == 9 {
				s.diagnose(s.currentView())
			}
			if i == 999 {
				at1k = liveHeapMB()
			}
		}
		b.ReportMetric(at1k, "heap-MB-1k")
		b.ReportMetric(liveHeapMB(), "heap-MB-10k")
	}
}

func liveHeapMB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// BenchmarkFrameRead reads didChange frames of a 25,000-char SOUL.md with
// the server's framing reader, against go.lsp.dev/jsonrpc2's own reader
// (which ends the session on a malformed frame).
func BenchmarkFrameRead(b *testing.B) {
	text, _ := json.Marshal(longBenchText(25000))
	body := `{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///w/SOUL.md","version":2},"contentChanges":[{"text":` + string(text) + `}]}}`
	one := fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
	const frames = 64
	input := []byte(strings.Repeat(one, frames))
	for _, rd := range []struct {
		name string
		open func(io.ReadWriteCloser) jsonrpc2.Stream
	}{
		{"quire", func(c io.ReadWriteCloser) jsonrpc2.Stream {
			return newFrameStream(c, slog.New(slog.DiscardHandler), nil)
		}},
		{"jsonrpc2", func(c io.ReadWriteCloser) jsonrpc2.Stream { return jsonrpc2.NewStream(c) }},
	} {
		b.Run(rd.name, func(b *testing.B) {
			b.SetBytes(int64(len(input)))
			b.ReportAllocs()
			for b.Loop() {
				st := rd.open(&benchConn{Reader: bytes.NewReader(input)})
				for range frames {
					if _, _, err := st.Read(context.Background()); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// benchConn is a read-only stream.
type benchConn struct{ *bytes.Reader }

func (benchConn) Write(p []byte) (int, error) { return len(p), nil }
func (benchConn) Close() error                { return nil }

// longBenchText is n chars of Markdown lines.
func longBenchText(n int) string {
	line := "Plain words about the soul, ação and 😀 emoji.\n"
	var sb strings.Builder
	for sb.Len() < n {
		sb.WriteString(line)
	}
	return sb.String()
}
