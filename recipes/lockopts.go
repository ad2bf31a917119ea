package recipes

import (
	"time"
)

// LockOption configures NewLock, NewHerdLock and NewHerdChildrenLock.
type LockOption func(*lockConfig)

type lockConfig struct {
	data           []byte
	lostAfter      time.Duration
	lostAfterSet   bool
	trace          *LockTrace
	listingHandOff bool
}

// WithLockData sets the data stored in each lock node (for example an
// owner's name, which the inspector shows). Defaults to none.
func WithLockData(data []byte) LockOption {
	return func(c *lockConfig) { c.data = data }
}

// WithLostAfterSuspended sets how long a held lock survives a dropped
// connection before Lost is closed, counted from when a server was last
// heard. The default, and the most, is the session timeout the server
// granted (Session.Timeout, not the one asked for): after that long without
// a server the session has expired there (Curator's LOST), while a shorter
// drop is only SUSPENDED and the lock is still held (Curator's standard
// error policy). d <= 0 closes Lost at the first sign
// of a dropped connection (Curator's session error policy). Expiry, a
// closed session and the node's deletion by someone else always close it.
func WithLostAfterSuspended(d time.Duration) LockOption {
	return func(c *lockConfig) { c.lostAfter, c.lostAfterSet = d, true }
}

// WithTrace reports measurements of every acquisition and release (for the
// load generator). Its functions are called synchronously from Lock,
// TryLock and Unlock and must be quick; share one LockTrace between locks
// only if its functions are safe for concurrent use.
func WithTrace(t *LockTrace) LockOption {
	return func(c *lockConfig) { c.trace = t }
}

// WithListingHandOff makes a fair Lock hand off by listing its directory
// after every wake-up, as Curator's and go-zookeeper's locks do, instead
// of trusting a release mark on its predecessor's node. Lock already does
// so where it sees that the server does not enforce owner-only ACLs; use
// this where a super user, whose writes no ACL stops, may write to lock
// nodes (Curator's Revoker, for one). The other recipes always list.
func WithListingHandOff() LockOption {
	return func(c *lockConfig) { c.listingHandOff = true }
}
