//go:build race

package o200k

// raceEnabled is true under -race, where the reference engine is too slow
// to split every code point (the splitter is a pure function: the race
// detector has nothing to find in it).
const raceEnabled = true
