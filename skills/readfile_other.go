//go:build !unix

package skills

import "errors"

// readDiskFile is the unix short way to read a skill file (open, read,
// close on a NUL-terminated path); elsewhere (Windows) there is none, and
// haveDiskRead sends every read through the tier's fs.FS, with the same
// answers.
func readDiskFile(path string, buf []byte, noLinks bool) ([]byte, error) {
	return nil, errors.ErrUnsupported
}

// haveDiskRead is whether readDiskFile reads: not on this system.
const haveDiskRead = false
