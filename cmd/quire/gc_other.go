//go:build !linux

package main

// physicalMemory is the machine's memory in bytes (0 when unknown).
func physicalMemory() uint64 { return 0 }
