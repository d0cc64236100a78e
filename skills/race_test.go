//go:build race

package skills

// raceEnabled is true under -race, where sync.Pool drops items at random
// and allocation counts mean nothing.
const raceEnabled = true
