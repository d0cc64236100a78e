//go:build !unix

package memstore

import (
	"errors"
	"os"
)

// canMap: vector arenas keep their vectors on the heap here.
const canMap = false

func mapReadOnly(*os.File, int64, int) ([]byte, error) {
	return nil, errors.New("memstore: no file mappings on this system")
}

func unmap([]byte) {}
