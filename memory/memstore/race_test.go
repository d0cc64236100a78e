//go:build race

package memstore

// raceEnabled is true under -race, ten times slower: TestIVFRecall, a
// measurement over 20,000 chunks, is left out (the approximate index's
// goroutines run in TestConformanceApproximate).
const raceEnabled = true
