package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMemoryLimitOf reads a container's limit from the first cgroup file
// there is, and none from "max" or a limit beyond the machine's memory.
func TestMemoryLimitOf(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	v2, v1 := write("v2", "536870912\n"), write("v1", "9223372036854771712\n")
	missing := filepath.Join(dir, "missing")
	const machine = 8 << 30
	tests := []struct {
		files []string
		want  uint64
	}{
		{[]string{v2, v1}, 512 << 20},
		{[]string{missing, v2}, 512 << 20},
		{[]string{write("max", "max\n")}, 0},
		{[]string{missing, v1}, 0},
		{[]string{missing}, 0},
		{[]string{write("big", "17179869184")}, 0},
	}
	for _, tt := range tests {
		if got := memoryLimitOf(tt.files, machine); got != tt.want {
			t.Errorf("%v: %d, want %d", tt.files, got, tt.want)
		}
	}
}
