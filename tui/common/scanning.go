package common

import "github.com/zkherd/zkherd/inspect"

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
