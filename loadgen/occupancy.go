package loadgen

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/recipes"
	"github.com/zkherd/zkherd/scenarios"
)

// occupancy checks, in a run spread over processes (SharedNamespace), who
// holds a lock, a lease or the leadership at once across the processes:
// the in-process guards (checks.go) see only this process's clients. Each
// holder, once granted, creates an ephemeral node in a directory next to
// the lock (held-<lock>), lists that directory, and deletes its node
// before it releases. A listing that shows more holders than the recipe
// allows, one of them another process's, is a violation.
//
// Assumptions, and the world where they fail:
//   - a grant follows, in ZooKeeper's order, the release that allowed it
//     (the recipes grant on a predecessor's delete), so a new holder's
//     listing sees every holder that had not yet started releasing. A
//     recipe that grants early breaks it, and the listing shows both
//     holders: that is the violation the check is for
//     (TestDistributedKinds' broken lock).
//   - a holder's node and its grant share a session, so an expiry ends
//     both at once: a holder whose session expired is no longer counted,
//     as its lock node is gone too.
//
// It costs three requests per grant (create, list, delete) on the
// servers under test; a record that could not be written or read (a cut
// connection) leaves that grant unchecked, counted in a warning
// (checker.unchecked).
type occupancy struct {
	process int
	// kind is the violation's kind and its counter; limit how many
	// holders may be inside at once (1 for exclusive grants).
	kind    string
	counter func(*checker) *atomic.Int64
	limit   int
	// patience bounds the retries of a record's removal: twice the
	// session timeout, past which the session, and the record with it,
	// has expired.
	patience time.Duration
}

// occCheck names the check in warnings.
const occCheck = "cross-process holder check"

// Holder modes in the node names: a writer (or any exclusive holder, or a
// lease) and a reader.
const (
	occWrite = "w"
	occRead  = "r"
)

// newOccupancy returns the run's cross-process holder check, nil when
// the run is not spread over processes or its recipe grants nothing.
func (r *runner) newOccupancy() *occupancy {
	if !r.opts.SharedNamespace {
		return nil
	}
	o := &occupancy{process: r.opts.Process, kind: "mutual exclusion", counter: func(c *checker) *atomic.Int64 { return &c.mutex }, limit: 1}
	switch {
	case r.run.Recipe.Spec().Exclusive:
	case r.run.Recipe == scenarios.Semaphore:
		o.kind, o.counter, o.limit = "semaphore limit", func(c *checker) *atomic.Int64 { return &c.overIssued }, r.run.Semaphore.Leases
	case r.run.Recipe == scenarios.Election:
		o.kind, o.counter = "single leader", func(c *checker) *atomic.Int64 { return &c.doubleLeader }
	default:
		return nil
	}
	o.patience = 2 * r.run.SessionTimeout
	return o
}

// removeRecord deletes a holder's record before its release. A record
// left behind while its session lives would count a holder that has
// gone, so a delete cut by a dropped connection is tried again until it
// is done, the record is gone, or its session has ended (which removes
// it), for at most patience.
func removeRecord(s *recipes.Session, node string, patience time.Duration) error {
	deadline := time.NewTimer(patience)
	defer deadline.Stop()
	for {
		err := s.Conn().Delete(node, -1)
		if done, retry := recordDeleted(err); done {
			return nil
		} else if !retry {
			return err
		}
		retry := time.NewTimer(50 * time.Millisecond)
		select {
		case <-s.Done():
			retry.Stop()
			return nil // the session ended: its ephemeral record with it
		case <-deadline.C:
			retry.Stop()
			return err
		case <-retry.C:
		}
	}
}

// recordDeleted says what a delete of a holder's record returned: done
// when the record is gone or goes with its session, retry when the
// connection was lost and the outcome is unknown (recipes'
// IsConnectionLoss, the one classifier: go-zookeeper also hands a request
// the raw error of its socket write, "broken pipe" or "connection reset",
// when the server dropped the connection). Neither: a refusal to report.
func recordDeleted(err error) (done, retry bool) {
	switch {
	case err == nil, errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrSessionExpired), errors.Is(err, zk.ErrClosing):
		return true, false
	case recipes.IsConnectionLoss(err):
		return false, true
	}
	return false, false
}

// heldDir is the directory of a lock's holder records: a sibling of the
// lock's directory (a child would be taken for a contender).
func heldDir(lock string) string { return path.Dir(lock) + "/held-" + path.Base(lock) }

// enter records client idx of session s as holding lock in mode through
// node held ("" when the lock names none), checks the other holders, and
// returns the function that removes the record (before the release).
func (o *occupancy) enter(c *checker, s *recipes.Session, lock string, idx int, mode, held string) (exit func()) {
	conn := s.Conn()
	dir := heldDir(lock)
	// The record names its holder's node, last (a node's name may hold
	// dashes): see granted.
	base := ""
	if held != "" {
		base = path.Base(held)
	}
	name := fmt.Sprintf("%s-p%d-%016x-%d-%s", mode, o.process, s.ID(), idx, base)
	node := dir + "/" + name
	_, err := conn.Create(node, nil, zk.FlagEphemeral, openACL)
	if errors.Is(err, zk.ErrNoNode) {
		if _, err = conn.Create(dir, nil, 0, openACL); err == nil || errors.Is(err, zk.ErrNodeExists) {
			_, err = conn.Create(node, nil, zk.FlagEphemeral, openACL)
		}
	}
	exit = func() {
		if err := removeRecord(s, node, o.patience); err != nil {
			c.unchecked(occCheck, fmt.Errorf("remove %s: %w", node, err))
		}
	}
	if err != nil {
		c.unchecked(occCheck, fmt.Errorf("create %s: %w", node, err))
		return exit
	}
	children, _, err := conn.Children(dir)
	if err != nil {
		c.unchecked(occCheck, fmt.Errorf("list %s: %w", dir, err))
		return exit
	}
	n, ok := o.judge(name, mode, children)
	if !ok {
		// A holder whose node is gone has lost its grant: another client
		// (foreign-delete, which the starter's foreign client accounts
		// for) deleted its node while it held. A holder deletes its record
		// before its node, and an expiry removes both at once, so in any
		// other world the other holder's node is still there.
		if nodes, _, err := conn.Children(lock); err == nil {
			children = granted(children, nodes)
			n, ok = o.judge(name, mode, children)
		}
	}
	if !ok {
		c.note(o.kind, o.counter(c), "%s held by %d holder(s) at once across processes (limit %d): %s", lock, n, o.limit, strings.Join(children, ", "))
	}
	return exit
}

// granted keeps the records whose holder's node is among nodes (or
// unknown: a lock that names no node).
func granted(records, nodes []string) []string {
	var out []string
	for _, r := range records {
		parts := strings.SplitN(r, "-", 5)
		if len(parts) < 5 || parts[4] == "" || slices.Contains(nodes, parts[4]) {
			out = append(out, r)
		}
	}
	return out
}

// judge reads a listing of holder records taken by the holder named own:
// the holders it counts against the limit, and whether the listing is
// allowed. Only a listing with another process's holder is judged: an
// overlap within one process is the in-process guards' to count.
func (o *occupancy) judge(own, mode string, children []string) (int, bool) {
	mine := fmt.Sprintf("-p%d-", o.process)
	var n, writers, foreign int
	for _, ch := range children {
		if ch != own && !strings.Contains(ch, mine) {
			foreign++
		}
		if strings.HasPrefix(ch, occWrite+"-") {
			writers++
		}
		n++
	}
	if foreign == 0 {
		return n, true
	}
	if mode == occRead {
		// A reader shares the lock with readers, never with a writer.
		return writers, writers == 0
	}
	if o.limit == 1 {
		return n, n == 1
	}
	return n, n <= o.limit
}
