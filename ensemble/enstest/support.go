package enstest

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/zkherd/zkherd/ensemble"
)

// ServerConfigs are the configurations recipes are tested against: the
// default, one that enforces no ACL, one with a digest algorithm clients do
// not compute, and one that reaps empty containers within a second.
func ServerConfigs() []ensemble.ServerConfig {
	return []ensemble.ServerConfig{
		{},
		{SkipACL: true},
		{DigestAlgorithm: "SHA-256"},
		{ContainerCheckInterval: time.Second},
	}
}

// LogTail returns the last n lines of a member's log file (Member.LogFile),
// for showing why a test or a server failed.
func LogTail(logFile string, n int) string {
	b, err := os.ReadFile(logFile)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", logFile, err)
	}
	lines := strings.Split(string(bytes.TrimRight(b, "\n")), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
