//go:build !linux

package main

// containerMemoryLimit is the memory limit of the container the process
// runs in: unknown (0) but on Linux.
func containerMemoryLimit() uint64 { return 0 }
