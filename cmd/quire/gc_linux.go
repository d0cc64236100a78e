package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// cgroupLimitFiles hold the memory limit of the process's control group:
// cgroup v2's memory.max, then cgroup v1's memory.limit_in_bytes, as a
// container sees them.
var cgroupLimitFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// containerMemoryLimit is the memory limit of the container the process
// runs in, in bytes: 0 when there is none ("max", or a limit no smaller
// than the machine's memory) or it cannot be read.
func containerMemoryLimit() uint64 {
	return memoryLimitOf(cgroupLimitFiles, physicalMemory())
}

func memoryLimitOf(files []string, machine uint64) uint64 {
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
		if err != nil || n == 0 || (machine > 0 && n >= machine) {
			return 0 // "max", or v1's "unlimited" (a huge number)
		}
		return n
	}
	return 0
}

// physicalMemory is the machine's memory in bytes (0 when unknown).
func physicalMemory() uint64 {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return 0
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}
