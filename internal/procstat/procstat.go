// Package procstat reads a Linux process's CPU time and memory from /proc,
// for the benchmarks that measure zkherd, ZooKeeper's JVM and the
// inspector side by side (Getrusage sees only the calling process). It is
// test support, as ensemble/enstest is: only benchmarks import it.
package procstat

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of /proc/<pid>/stat's times (USER_HZ, 100 on Linux).
const userHZ = 100

// CPU is process pid's user plus system CPU time so far.
func CPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces:
	// the fields are counted from after its closing one.
	s := string(raw)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the name, want at least 13", pid, len(fields))
	}
	user, err1 := strconv.ParseInt(fields[11], 10, 64) // utime, field 14 of the line
	sys, err2 := strconv.ParseInt(fields[12], 10, 64)  // stime, field 15
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return time.Duration(user+sys) * time.Second / userHZ, nil
}

// StatusKiB is a field of process pid's /proc/<pid>/status given in kB,
// such as VmRSS or VmHWM.
func StatusKiB(pid int, field string) (int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(raw)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no %s", pid, field)
}
