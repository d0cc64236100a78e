//go:build !unix

package mapfile

import "os"

func read(path string, _ int64) ([]byte, func(), error) {
	b, err := os.ReadFile(path)
	return b, nil, err
}
