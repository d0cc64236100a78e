package mapfile

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestRead: a file is returned whole whether it is mapped (unix, from
// min bytes) or read; only a mapped one comes with an unmap function.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name   string
		size   int
		min    int64
		mapped bool
	}{
		{"empty", 0, 0, false},
		{"below min", 100, 4096, false},
		{"at min", 4096, 4096, runtime.GOOS != "windows"},
		{"above min", 10000, 1, runtime.GOOS != "windows"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := bytes.Repeat([]byte("pack"), tt.size/4)
			path := filepath.Join(dir, tt.name)
			if err := os.WriteFile(path, want, 0o600); err != nil {
				t.Fatal(err)
			}
			got, unmap, err := Read(path, tt.min)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("read %d bytes, want the file's %d", len(got), len(want))
			}
			if (unmap != nil) != tt.mapped {
				t.Errorf("mapped %v, want %v", unmap != nil, tt.mapped)
			}
			if unmap != nil {
				unmap()
			}
		})
	}
	if _, _, err := Read(filepath.Join(dir, "missing"), 0); !os.IsNotExist(err) {
		t.Errorf("a missing file: %v, want not exist", err)
	}
}
