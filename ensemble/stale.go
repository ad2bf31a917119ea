package ensemble

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// tempPrefix starts the name of every temporary directory Start creates.
const tempPrefix = "zkherd-ensemble-"

// ownerFile, in a temporary directory Start created, holds the id of the
// process that owns it, so that a later start can tell a directory left by
// a process that died (SIGKILL, a crash: Stop never ran) from one in use.
const ownerFile = "owner.pid"

func writeOwner(dir string) error {
	return os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
}

// RemoveStale removes the temporary ensemble directories in the system's
// temporary directory whose owning process is gone, and returns their
// paths. Their servers died with the owner (they get SIGKILL when it
// dies). A directory without an owner file, or whose owner is alive or
// cannot be told, is left alone.
func RemoveStale() (removed []string, err error) {
	dirs, err := filepath.Glob(filepath.Join(os.TempDir(), tempPrefix+"*"))
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || pid <= 0 || pid == os.Getpid() || ProcessAlive(pid) {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, dir)
	}
	return removed, errors.Join(errs...)
}

// ProcessAlive reports whether a process with this id exists (EPERM: it
// exists but belongs to someone else).
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
