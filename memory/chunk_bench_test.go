package memory

import (
	"fmt"
	"strings"
	"testing"
)

// memoryText returns about n bytes of a daily memory log: headings, short
// paragraphs of notes, blank lines and a few non-ASCII characters, the
// text chunking sees most.
func memoryText(n int) string {
	var b strings.Builder
	b.Grow(n + 200)
	for i := 0; b.Len() < n; i++ {
		if i%40 == 0 {
			fmt.Fprintf(&b, "## 2026-11-%02d\n\n", 1+i/40%28)
		}
		fmt.Fprintf(&b, "- %02d:%02d Inês asked about the late checkout for room %d; the café opens at 07:00, said yes until 13:00.\n", i/60%24, i%60, 100+i%300)
		if i%5 == 4 {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// BenchmarkSplit chunks a 50 KB and a 5 MB memory document, counting code
// points (the chunking benchmark; GoClaw's chunker: 48.2 µs at
// 50 KB).
func BenchmarkSplit(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"50KB", 50_000}, {"5MB", 5_000_000}} {
		text := memoryText(size.n)
		b.Run(size.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				Split(text)
			}
		})
	}
}

// BenchmarkChunks is Split plus hashing each chunk and its lead-in.
func BenchmarkChunks(b *testing.B) {
	d := Document{Path: "memory/2026-11-22.md", Text: memoryText(50_000)}
	b.SetBytes(int64(len(d.Text)))
	b.ReportAllocs()
	for b.Loop() {
		d.Chunks()
	}
}

// BenchmarkChunksAppended is the chunks of a 5 KB and a 50 KB log after
// an entry was appended, knowing the last version's chunks: ChunksAfter
// splits the whole log, ChunksExtending its last chunk and the entry.
func BenchmarkChunksAppended(b *testing.B) {
	for _, n := range []int{5_000, 50_000} {
		prev := memoryText(n)
		d := NewDocument("memory/2026-11-22.md", "u1", prev+"- 23:59 one more entry about the late checkout.\n")
		chunks := NewDocument(d.Path, d.User, prev).Chunks()
		b.Run(fmt.Sprintf("after/%dKB", n/1000), func(b *testing.B) {
			for b.Loop() {
				d.ChunksAfter(chunks)
			}
		})
		b.Run(fmt.Sprintf("extending/%dKB", n/1000), func(b *testing.B) {
			for b.Loop() {
				d.ChunksExtending(prev, chunks)
			}
		})
	}
}
