package loadgen

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/go-zookeeper/zk"
)

// TestRecordDeletedRetriesSocketErrors: a holder's record whose delete
// failed on the socket (go-zookeeper hands a request the raw error of its
// write when the server dropped the connection) is deleted again, not
// given up at once: the record would stay while its session lives and
// count a holder that has gone (a leftover of the 20,000-contender run,
// docs/SCALE.md). Before, only ErrConnectionClosed and ErrNoServer were
// retried.
func TestRecordDeletedRetriesSocketErrors(t *testing.T) {
	writeErr := func(errno syscall.Errno) error {
		return &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", errno)}
	}
	tests := []struct {
		name        string
		err         error
		done, retry bool
	}{
		{"deleted", nil, true, false},
		{"already gone", zk.ErrNoNode, true, false},
		{"session ended", zk.ErrSessionExpired, true, false},
		{"closing", zk.ErrClosing, true, false},
		{"connection closed", zk.ErrConnectionClosed, false, true},
		{"no server", zk.ErrNoServer, false, true},
		{"broken pipe", writeErr(syscall.EPIPE), false, true},
		{"reset", writeErr(syscall.ECONNRESET), false, true},
		{"refused", zk.ErrNoAuth, false, false},
		{"other", errors.New("zk: unknown error"), false, false},
		{"wrapped loss", fmt.Errorf("delete: %w", zk.ErrConnectionClosed), false, true},
	}
	for _, tt := range tests {
		if done, retry := recordDeleted(tt.err); done != tt.done || retry != tt.retry {
			t.Errorf("%s (%v): done %v retry %v, want %v %v", tt.name, tt.err, done, retry, tt.done, tt.retry)
		}
	}
}
