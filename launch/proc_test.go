package launch

import (
	"strconv"
	"strings"

	"github.com/zkherd/zkherd/internal/procstat"
)

func atoi(s string) int {
	n, _ := strconv.Atoi(strings.TrimSpace(s))
	return n
}

// zombie says whether pid has exited and waits to be reaped.
func zombie(pid int) bool {
	state, _, err := procstat.State(pid)
	return err != nil || state == "Z"
}
