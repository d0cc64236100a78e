//go:build !unix

package memory

import "os"

// mapFile reads file into memory where mapping is not available.
func mapFile(file string) ([]byte, func(), error) {
	data, err := os.ReadFile(file)
	return data, func() {}, err
}
