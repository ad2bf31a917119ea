package recipes

import "errors"

var (
	// ErrSessionExpired means the ZooKeeper session ended; every ephemeral node
	// it owned is gone and any lock it held is no longer held.
	ErrSessionExpired = errors.New("recipes: session expired")
	// ErrSessionClosed means the Session was closed by its owner.
	ErrSessionClosed = errors.New("recipes: session closed")
	// ErrNotHeld is returned by Unlock/Release on something not held.
	ErrNotHeld = errors.New("recipes: not held")
	// ErrHeldByOther is returned by TryLock when another owner holds the lock.
	ErrHeldByOther = errors.New("recipes: held by another owner")
	// ErrLost means ownership could not be kept (node deleted by someone else,
	// session expired, or disconnected longer than the policy allows).
	ErrLost = errors.New("recipes: ownership lost")
	// ErrLockPending is returned by TryLock on a value whose Lock is still
	// waiting for the lock: the value is one owner, already queued.
	ErrLockPending = errors.New("recipes: a Lock on this value is still waiting")
	// ErrSequenceWrapped means the server's sequence counter for a
	// directory passed 2^31 and wrapped to negative numbers, which no
	// client orders correctly: use a new path (or delete the directory
	// while nobody uses it, which restarts the counter).
	ErrSequenceWrapped = errors.New("recipes: sequence number wrapped past 2^31 (use a new path, or recreate the directory while unused)")
	// ErrReplyTooLarge means a reply (typically a long child list) did not
	// fit the session's receive buffer: go-zookeeper drops the connection
	// instead, so retrying would loop. Raise it with WithBufferSizes.
	ErrReplyTooLarge = errors.New("recipes: reply larger than the session's receive buffer")
	// ErrOutcomeUnknown means a write's reply was lost and what it did
	// could not be read back (the session ended, or the connection stayed
	// down for the session timeout): the error says which write, and what
	// the caller holds in the meantime.
	ErrOutcomeUnknown = errors.New("recipes: outcome unknown")
	// ErrNoSession is returned (wrapped) by NewSession when no session
	// could be established before ctx ended.
	ErrNoSession = errors.New("recipes: no session")
)
