//go:build race

package bm25

// raceEnabled is true under -race, where sync.Pool drops items at random
// and allocation counts mean nothing.
const raceEnabled = true
