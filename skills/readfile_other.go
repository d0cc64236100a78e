//go:build !unix

package skills

import "errors"

func readDiskFile(path string, buf []byte) ([]byte, error) {
	return nil, errors.ErrUnsupported
}

const haveDiskRead = false
