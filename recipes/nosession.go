package recipes

import (
	"errors"
	"fmt"
	"strings"
)

// NoSessionError is what NewSession returns when no session could be
// had (it matches ErrNoSession and Err): the servers tried, why it gave
// up, and the last connection attempt's failure as go-zookeeper logged it
// (LastAttempt, "" when none was), so that a command can put each in its
// own words without reading them back out of the message.
type NoSessionError struct {
	Servers     []string
	Err         error
	LastAttempt string
}

// noSessionHint ends the message of a NoSessionError.
// (A command names its own fix: zkherd's is internal/usermsg.NoSession.)
const noSessionHint = "is ZooKeeper running there?"

func (e *NoSessionError) Error() string {
	if e.LastAttempt != "" {
		return fmt.Sprintf("%s (last attempt: %s; %s)", e.Head(), e.LastAttempt, noSessionHint)
	}
	return fmt.Sprintf("%s (%s)", e.Head(), noSessionHint)
}

// Head is the message without the last attempt and the hint: "recipes:
// no session with SERVERS: ERR".
func (e *NoSessionError) Head() string {
	return fmt.Sprintf("%v with %s: %v", ErrNoSession, strings.Join(e.Servers, ","), e.Err)
}

// Unwrap makes the error match ErrNoSession and its cause.
func (e *NoSessionError) Unwrap() []error { return []error{ErrNoSession, e.Err} }

// errAuthFailed ends a session whose digest credentials the servers
// refused (internal/usermsg names the fix).
var errAuthFailed = errors.New("recipes: authentication failed: the servers refused the credentials")
