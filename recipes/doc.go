// Package recipes implements ZooKeeper coordination recipes: a fair lock, the
// naive "herd" locks kept for comparison, a read/write lock, a semaphore, a
// queue, leader election and barriers.
//
// Every recipe follows the same rules:
//   - blocking calls take a context first and, when it ends, delete the node
//     they created before returning;
//   - nodes are created with a protected name (a per-attempt GUID prefix) so a
//     create whose reply was lost to a connection drop is found again, never
//     duplicated;
//   - loss of ownership is a channel closed by exactly one goroutine (Lost),
//     counted on the session timeout the server granted (Session.Timeout,
//     the ConnectResponse's), never the one asked for, and closed too when
//     the server has been silent for most of it (a paused process);
//   - a release (Unlock, Resign, Release, Ack) of a grant whose session
//     ended under it never returns nil: its error wraps ErrLost, as for a
//     holder paused or cut off past its session while another was granted;
//   - waiters watch exactly one node, so a release wakes exactly one waiter
//     (except the herd locks, which exist to show the cost of not doing so).
//
// The fair lock's hand-off costs no request: a holder releases by deleting
// its node in one transaction with a write to it, and the waiter behind it
// takes that event as its grant (see Lock). Its nodes are created so that
// only their owner's process may write them (world may read), which keeps
// anyone else from faking a release. A probe at first use checks that the
// server enforces that; where it does not (skipACL, another digest
// algorithm), or with WithListingHandOff (where a super user may write lock
// nodes), the lock hands off as Curator's does, by listing on every
// wake-up. Lock.HandOff says which.
//
// Fencing tokens are the creation zxid of the node held (every recipe
// that hands one out): they grow with every transaction of the ensemble,
// so they keep increasing when a lock's directory is deleted and created
// anew, as Curator's container directories are once empty, where sequence
// numbers start again at 0.
//
// Read-backs after a lost reply (did my create, delete or transaction
// happen?) are preceded by a sync, since the member a client reconnects to
// may not have applied the write yet; and a waiter whose own node was
// deleted by someone else is never granted.
//
// Node names follow Apache Curator's layouts (layout.go), so a Go process using
// this package and a Java process using Curator exclude each other on the same
// path, and the inspector can draw chains written by either.
package recipes
