//go:build unix

package gitsync

import (
	"fmt"
	"os"
)

// syncDir makes a directory's entries (a rename, a new file) durable:
// fsync of the directory itself.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
