//go:build !race

package o200k

const raceEnabled = false
