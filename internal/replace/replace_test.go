package replace

import (
	"os"
	"path/filepath"
	"testing"
)

// File puts the new file's bytes where the old file was, and leaves no
// file at the old path; a reader that opened the destination before
// (on unix) keeps the bytes it opened.
func TestFile(t *testing.T) {
	dir := t.TempDir()
	dst, tmp := filepath.Join(dir, "cache"), filepath.Join(dir, ".cache-tmp")
	for _, step := range []struct{ data string }{{"first"}, {"second"}} {
		if err := os.WriteFile(tmp, []byte(step.data), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := File(tmp, dst); err != nil {
			t.Fatalf("File(%s): %v", step.data, err)
		}
		if b, err := os.ReadFile(dst); err != nil || string(b) != step.data {
			t.Errorf("after replacing with %q the file holds %q, %v", step.data, b, err)
		}
		if _, err := os.Stat(tmp); !os.IsNotExist(err) {
			t.Errorf("the temporary file is still there: %v", err)
		}
	}
	if err := File(filepath.Join(dir, "missing"), dst); err == nil {
		t.Error("replacing with a missing file succeeded")
	}
}
