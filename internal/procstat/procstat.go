// Package procstat reads a Linux process's CPU time and memory from /proc,
// for the benchmarks that measure zkherd, ZooKeeper's JVM and the
// inspector side by side (Getrusage sees only the calling process), and
// its state and session, for the tests that wait for what they started to
// exit. It is test support, as ensemble/enstest is: only tests and
// benchmarks import it.
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

// statFields are the fields of process pid's /proc/<pid>/stat after the
// command name (field 2), which is in parentheses and may hold spaces:
// fields[0] is the state (field 3 of the line). want is how many it needs.
func statFields(pid, want int) ([]string, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	s := string(raw)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < want {
		return nil, fmt.Errorf("/proc/%d/stat: %d fields after the name, want at least %d", pid, len(fields), want)
	}
	return fields, nil
}

// CPU is process pid's user plus system CPU time so far.
func CPU(pid int) (time.Duration, error) {
	fields, err := statFields(pid, 13)
	if err != nil {
		return 0, err
	}
	user, err1 := strconv.ParseInt(fields[11], 10, 64) // utime, field 14 of the line
	sys, err2 := strconv.ParseInt(fields[12], 10, 64)  // stime, field 15
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return time.Duration(user+sys) * time.Second / userHZ, nil
}

// State is process pid's state letter ("R", "S", "Z" for one exited but
// not yet reaped...) and its session id.
func State(pid int) (state string, session int, err error) {
	fields, err := statFields(pid, 4)
	if err != nil {
		return "", 0, err
	}
	session, err = strconv.Atoi(fields[3]) // field 6 of the line
	if err != nil {
		return "", 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return fields[0], session, nil
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
