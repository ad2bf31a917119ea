package common

import (
	"fmt"
	"time"

	"github.com/zkherd/zkherd/inspect"
)

// Scanning is what the Locks and Queues views say while the first walk of
// the tree runs ("" once it has ended): the walk is paced, minutes on a
// large tree, and until it ends the locks and queues listed are those
// found so far, never a complete count.
func Scanning(s *inspect.Snapshot) string {
	if s == nil || !s.Scanning {
		return ""
	}
	if s.ScanRead == 0 {
		return "scanning the tree…"
	}
	return "scanning the tree… " + Plural(s.ScanRead, "directory", "directories") + " read so far"
}

// LastRead says how long before the snapshot a lock or queue directory
// was read ("" when it was read for it): a still directory is read less
// often (inspect/still.go), and its figures must not pass for fresh.
func LastRead(age time.Duration) string {
	if age <= 0 {
		return ""
	}
	return fmt.Sprintf("last read %s ago", wholeSeconds(age))
}

// StillDirs sums up, for a view's heading, the directories shown as last
// read before the snapshot ("" when none): "18 still: last read up to 8s
// ago".
func StillDirs(ages []time.Duration) string {
	n, oldest := 0, time.Duration(0)
	for _, a := range ages {
		if a > 0 {
			n, oldest = n+1, max(oldest, a)
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d still: last read up to %s ago", n, wholeSeconds(oldest))
}

// wholeSeconds is d in whole seconds, rounded up: "8s", never "0s".
func wholeSeconds(d time.Duration) string {
	return fmt.Sprintf("%ds", int64((d+time.Second-1)/time.Second))
}
