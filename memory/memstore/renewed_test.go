package memstore

import (
	"context"
	"strings"
	"testing"
	"unsafe"

	"github.com/quirehq/quire/memory"
)

// TestKeptChunksHoldTheNewVersion: after an append to a log, the chunks
// kept as they were hold their text in the log's new version, never in
// the old one, which would otherwise stay in memory for as long as they
// do (every version of a log under a stream of appends).
func TestKeptChunksHoldTheNewVersion(t *testing.T) {
	ctx := context.Background()
	s, err := New(Options{Embedder: memory.None{}})
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	for i := range 40 {
		log.WriteString(strings.Repeat("- met a customer about an invoice and the quarterly report ", 3))
		log.WriteString("entry " + strings.Repeat("x", i) + "\n\n")
	}
	v1 := log.String()
	v2 := v1 + "- one more entry about the roof repair\n"
	const path = "memory/2026-11-26.md"
	if _, err := s.Index(ctx, "a", "c1", []memory.Document{memory.NewDocument(path, "u", v1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Index(ctx, "a", "c2", []memory.Document{memory.NewDocument(path, "u", v2)}); err != nil {
		t.Fatal(err)
	}
	chunks := s.agents["a"].chunks
	if len(chunks) < 3 {
		t.Fatalf("%d chunks: the log should make several", len(chunks))
	}
	for _, c := range chunks {
		if within(c.Text, v1) {
			t.Errorf("chunk at line %d holds its text in the old version of the log", c.StartLine)
		}
		if !within(c.Text, v2) {
			t.Errorf("chunk at line %d does not hold its text in the new version of the log", c.StartLine)
		}
	}
}

// within reports whether part's bytes lie in whole's memory.
func within(part, whole string) bool {
	p, w := uintptr(unsafe.Pointer(unsafe.StringData(part))), uintptr(unsafe.Pointer(unsafe.StringData(whole)))
	return p >= w && p+uintptr(len(part)) <= w+uintptr(len(whole))
}
