package flock

import (
	"os"
	"path/filepath"
	"testing"
)

// TestTryLock: a second open file of a locked file finds it held, and
// takes it once the holder is closed.
func TestTryLock(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	open := func() *os.File {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	first, second := open(), open()
	if held, err := TryLock(first); held || err != nil {
		t.Fatalf("first lock: held %v, %v", held, err)
	}
	if _, err := first.WriteString("42\n"); err != nil {
		t.Fatal(err)
	}
	if held, err := TryLock(second); !held || err != nil {
		t.Fatalf("second lock while the first holds it: held %v, %v; want held", held, err)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "42\n" {
		t.Errorf("the holder's content is unreadable while locked: %q, %v", b, err)
	}
	first.Close()
	if held, err := TryLock(second); held || err != nil {
		t.Fatalf("second lock after the first closed: held %v, %v", held, err)
	}
}
