package recipes

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/go-zookeeper/zk"
)

// ClaimSuffix ends the name of a claim node: a lock-safe consumer claims
// item "<name>" by creating the ephemeral sibling "<name>.claim".
const ClaimSuffix = ".claim"

// Queue is a distributed FIFO queue (ZooKeeper's queue recipe). Producers
// add PERSISTENT_SEQUENTIAL items "_c_<uuid>-qn-<seq>" under the queue's
// path (the protected name lets a Put whose reply was lost find its item
// instead of adding a second one); consumers take the lowest sequence
// first.
//
// There are two ways to consume; use one of them per queue:
//
//   - Take reads the lowest item and deletes it (with its version, so of
//     two consumers reading the same item only one deletes it; the other
//     moves on). Every item is taken exactly once, but an item is gone
//     before its consumer processes it: a consumer that dies then loses it
//     (at most once). One corner: if the connection drops during the delete
//     and the item is found gone afterwards, Take cannot tell whether its
//     delete or another consumer's removed it, and returns the item; only
//     then can two consumers get the same item.
//   - Claim creates an ephemeral claim node next to the lowest unclaimed
//     item and returns the item, which stays in the queue until the
//     consumer calls Ack (deleting item and claim in one transaction). A
//     consumer that dies mid-item loses nothing: its claim goes with its
//     session and the item is claimed again by another consumer (at least
//     once: an item whose consumer died after processing it but before
//     Ack is processed again).
//
// Consumers waiting on an empty queue watch its children, so every Put
// wakes every idle consumer; busy consumers are not woken. A Queue value
// caches the sorted listing between takes (a listing is the queue's whole
// size: with protected names, about 57 bytes per item, so the default
// 1 MiB receive buffer lists some 18,000 items; see WithBufferSizes),
// shares it among the goroutines using the value, and lists again only
// when it is used up. While Take deletes an item it already reads the next
// one, so a consumer with items queued spends one round trip per item.
// Safe for concurrent use.
type Queue struct {
	s       *Session
	path    string
	pathErr error

	mu    sync.Mutex
	batch []string // item names listed, lowest sequence first, not yet tried
	ahead *readAhead
}

// readAhead is a read of the item Take expects to take next, started while
// it deleted the one before.
type readAhead struct {
	name string
	done chan struct{} // closed by the reading goroutine
	data []byte
	stat *zk.Stat
	err  error
}

// NewQueue returns the queue at path (an absolute znode path, created on
// first use). It does not talk to ZooKeeper.
func NewQueue(s *Session, path string) *Queue {
	return &Queue{s: s, path: path, pathErr: validLockPath(path)}
}

// Path is the queue's directory.
func (q *Queue) Path() string { return q.path }

// Put adds an item with data at the tail and returns its node's path. When
// ctx ends while its create's outcome is unknown, Put removes the item if
// it was created (for up to the session timeout); if it cannot, the error
// wraps ErrOutcomeUnknown: the item may be queued. A create whose reply
// was lost and whose item is then not found is not made again (a
// consumer may have taken the item already): the error wraps
// ErrOutcomeUnknown, and the item may have been delivered.
func (q *Queue) Put(ctx context.Context, data []byte) (string, error) {
	if q.pathErr != nil {
		return "", q.pathErr
	}
	node, err := createProtected(ctx, q.s, q.path, PrefixQueueItem, data, zk.FlagSequence)
	if err != nil {
		return "", fmt.Errorf("recipes: queue %s: put: %w", q.path, err)
	}
	return node, nil
}

// Take removes the item at the head and returns its data, waiting for one
// while the queue is empty, until ctx ends. Items claimed by Claim are
// skipped. When ctx ends while the outcome of Take's delete is unknown
// (its reply lost with the connection), Take finds out first, for up to
// the session timeout: an item it removed is returned, with a nil error.
// If it cannot find out, the error wraps ErrOutcomeUnknown and comes with
// the item's data: the item may be gone from the queue, and then nobody
// else gets it.
func (q *Queue) Take(ctx context.Context) ([]byte, error) {
	if q.pathErr != nil {
		return nil, q.pathErr
	}
	for {
		name, err := q.next(ctx)
		if err != nil {
			return nil, err
		}
		data, ok, err := q.take(ctx, name)
		if err != nil {
			// (data is nil, except with ErrOutcomeUnknown.)
			return data, fmt.Errorf("recipes: queue %s: take: %w", q.path, err)
		}
		if ok {
			return data, nil
		}
	}
}

// take reads and deletes the item name; ok is false when another consumer
// got it first.
func (q *Queue) take(ctx context.Context, name string) (data []byte, ok bool, err error) {
	conn := q.s.Conn()
	item := joinPath(q.path, name)
	ahead := q.claimAhead(name)
	for {
		var stat *zk.Stat
		if ahead != nil {
			select {
			case <-ahead.done:
			case <-ctx.Done():
				return nil, false, ctx.Err()
			}
			data, stat, err = ahead.data, ahead.stat, ahead.err
			ahead = nil
			if isConnErr(err) {
				continue // read again, with retries
			}
		} else {
			err = retryConn(ctx, q.s, func() (err error) {
				data, stat, err = conn.Get(item)
				return err
			})
		}
		switch {
		case errors.Is(err, zk.ErrNoNode):
			return nil, false, nil
		case err != nil:
			return nil, false, sessionErr(q.s, err)
		}
		q.readAhead()
		err = conn.Delete(item, stat.Version)
		for isConnErr(err) {
			// Did our delete happen? If the item is still there, it did
			// not. Found out even when ctx has ended: returning ctx's error
			// for an item we removed would lose it (issue 21).
			exists, rerr := existsAfterLostReply(ctx, q.s, item)
			if rerr != nil {
				return data, false, fmt.Errorf("%w: delete of %s (item data returned; it may be gone from the queue): %w",
					ErrOutcomeUnknown, item, rerr)
			}
			if !exists {
				return data, true, nil // see the Queue comment: taken, by us or at once by another
			}
			if err := ctx.Err(); err != nil {
				return nil, false, err // not taken: the item stays queued
			}
			err = conn.Delete(item, stat.Version)
		}
		switch {
		case err == nil:
			return data, true, nil
		case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrNotEmpty):
			return nil, false, nil // taken by another; or not ours to take
		case errors.Is(err, zk.ErrBadVersion):
			continue // rewritten since we read it: read again
		}
		return nil, false, sessionErr(q.s, err)
	}
}

// Claim returns the lowest unclaimed item, claimed by this session, waiting
// for one while there is none, until ctx ends. The item stays in the queue
// until Ack; if the session ends first, it becomes available again.
func (q *Queue) Claim(ctx context.Context) (*Claim, error) {
	if q.pathErr != nil {
		return nil, q.pathErr
	}
	for {
		name, err := q.next(ctx)
		if err != nil {
			return nil, err
		}
		c, err := q.claim(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("recipes: queue %s: claim: %w", q.path, err)
		}
		if c != nil {
			return c, nil
		}
	}
}

// claim claims one item; nil when it is claimed by another or gone.
func (q *Queue) claim(ctx context.Context, name string) (*Claim, error) {
	item := joinPath(q.path, name)
	claim := item + ClaimSuffix
	if unknown, err := createOwnEphemeral(ctx, q.s, claim); err != nil {
		if unknown {
			// Our claim may be there: an item claimed by a live session
			// that no longer wants it would be claimed by nobody.
			discard(ctx, q.s, func(ctx context.Context) error {
				_, err := deleteIfOwned(ctx, q.s, claim, 0, false, nil)
				return err
			})
		}
		if errors.Is(err, zk.ErrNodeExists) {
			return nil, nil // claimed by another consumer
		}
		return nil, err
	}
	var data []byte
	err := retryConn(ctx, q.s, func() (err error) {
		data, _, err = q.s.Conn().Get(item)
		return err
	})
	if err == nil {
		return &Claim{Data: data, q: q, item: item, claim: claim}, nil
	}
	// Acked by another consumer between our listing and our claim (or we
	// failed): the claim must not outlive this call.
	discard(ctx, q.s, func(ctx context.Context) error {
		_, err := deleteIfOwned(ctx, q.s, claim, 0, false, nil)
		return err
	})
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	return nil, err
}

// next pops the lowest untried item name from the batch, listing the queue
// again when the batch is used up and waiting while it is empty.
func (q *Queue) next(ctx context.Context) (string, error) {
	if name, ok := q.pop(); ok {
		return name, nil
	}
	conn := q.s.Conn()
	watch := false
	for {
		var (
			children []string
			ch       <-chan zk.Event
		)
		err := retryConn(ctx, q.s, func() (err error) {
			if watch {
				children, _, ch, err = conn.ChildrenW(q.path)
			} else {
				children, _, err = conn.Children(q.path)
			}
			return err
		})
		if errors.Is(err, zk.ErrNoNode) {
			if err := ensurePath(ctx, q.s, q.path); err != nil {
				return "", fmt.Errorf("recipes: queue %s: %w", q.path, err)
			}
			continue
		}
		if err != nil {
			return "", fmt.Errorf("recipes: queue %s: list: %w", q.path, err)
		}
		if items := unclaimedItems(children); len(items) > 0 {
			q.mu.Lock()
			if len(q.batch) == 0 {
				q.batch = items
			} // else another goroutine listed meanwhile; its batch is as good
			name := q.batch[0]
			q.batch = q.batch[1:]
			q.mu.Unlock()
			return name, nil
		}
		if !watch {
			watch = true // list again, this time with a watch to wait on
			continue
		}
		if _, err := waitEvent(ctx, q.s, ch); err != nil && !errors.Is(err, errWatchDropped) {
			return "", err
		}
		watch = false
	}
}

// readAhead starts reading the next item of the batch, unless a read is
// already under way. The goroutine ends with its one request.
func (q *Queue) readAhead() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.batch) == 0 || q.ahead != nil {
		return
	}
	r := &readAhead{name: q.batch[0], done: make(chan struct{})}
	q.ahead = r
	go func() {
		defer close(r.done)
		r.data, r.stat, r.err = q.s.Conn().Get(joinPath(q.path, r.name))
	}()
}

// claimAhead returns the read started for name, if any, and forgets any
// read of another item (the batch moved past it).
func (q *Queue) claimAhead(name string) *readAhead {
	q.mu.Lock()
	defer q.mu.Unlock()
	r := q.ahead
	if r == nil {
		return nil
	}
	if r.name != name {
		if !slices.Contains(q.batch, r.name) {
			q.ahead = nil
		}
		return nil
	}
	q.ahead = nil
	return r
}

func (q *Queue) pop() (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.batch) == 0 {
		return "", false
	}
	name := q.batch[0]
	q.batch = q.batch[1:]
	return name, true
}

// unclaimedItems returns the queue items in a listing that have no claim,
// lowest sequence first.
func unclaimedItems(children []string) []string {
	nodes, other := ParseChildren(children)
	claimed := make(map[string]bool)
	for _, name := range other {
		if item, ok := strings.CutSuffix(name, ClaimSuffix); ok {
			claimed[item] = true
		}
	}
	items := make([]string, 0, len(nodes))
	for _, n := range nodes {
		if n.Kind == KindQueueItem && !claimed[n.Name] {
			items = append(items, n.Name)
		}
	}
	return items
}

// Len is the number of items in the queue, claimed ones included.
func (q *Queue) Len(ctx context.Context) (int, error) {
	if q.pathErr != nil {
		return 0, q.pathErr
	}
	var children []string
	err := retryConn(ctx, q.s, func() (err error) {
		children, _, err = q.s.Conn().Children(q.path)
		return err
	})
	if errors.Is(err, zk.ErrNoNode) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("recipes: queue %s: %w", q.path, err)
	}
	n := 0
	for _, c := range children {
		if node, ok := ParseNode(c); ok && node.Kind == KindQueueItem {
			n++
		}
	}
	return n, nil
}

// Claim is an item claimed by Queue.Claim: Data is the item's, and the item
// stays in the queue, claimed by this session, until Ack or Release.
type Claim struct {
	Data []byte

	q           *Queue
	item, claim string
	mu          sync.Mutex
	done        bool
	// unknown: an Ack's transaction may have been carried out, and
	// nobody could read back whether it was.
	unknown bool
}

// Item is the claimed item's full path.
func (c *Claim) Item() string { return c.item }

// Ack removes the item and its claim in one transaction: the item was
// processed. If the connection drops, it retries until the server confirms
// both are gone. An error wrapping ErrLost means the claim was lost (the
// session ended, so the item is back in the queue for another consumer)
// or the item had been removed by someone else. When ctx ends while the
// transaction's outcome is unknown (its reply lost), Ack finds out first,
// for up to the session timeout: nil if it was carried out, ctx's error if
// not (the item is still claimed; Ack or Release again). If it cannot find
// out, the error wraps ErrOutcomeUnknown.
func (c *Claim) Ack(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return fmt.Errorf("recipes: queue %s: ack %s: %w", c.q.path, c.item, ErrNotHeld)
	}
	s := c.q.s
	conn := s.Conn()
	if c.unknown {
		// An earlier Ack's outcome was never learnt: if it was carried
		// out, a second transaction would report the item removed by
		// another client.
		err := syncLost(ctx, s, c.claim)
		var exists bool
		if err == nil {
			err = retryConn(ctx, s, func() (err error) {
				exists, _, err = conn.Exists(c.claim)
				return err
			})
		}
		if err != nil {
			return c.unknownOutcome(err)
		}
		c.unknown = false
		if !exists {
			c.done = true
			return nil
		}
	}
	for {
		if err := s.alive(); err != nil {
			return c.lost(err) // ended before the transaction was sent
		}
		res, err := conn.Multi(
			&zk.DeleteRequest{Path: c.item, Version: -1},
			&zk.DeleteRequest{Path: c.claim, Version: -1},
		)
		switch {
		case err == nil:
			c.done = true
			return nil
		case isConnErr(err):
			// Applied before the drop? Only we delete our claim. Found out
			// even when ctx has ended, so that Ack says what it did.
			exists, err := existsAfterLostReply(ctx, s, c.claim)
			switch {
			case err != nil:
				return c.unknownOutcome(err)
			case !exists:
				c.done = true
				return nil
			}
			if err := ctx.Err(); err != nil {
				return c.lost(err) // not acked: still claimed, Ack may be called again
			}
			continue
		case len(res) == 2 && errors.Is(res[0].Error, zk.ErrNoNode):
			c.done = true
			discard(ctx, s, func(ctx context.Context) error {
				_, err := deleteIfOwned(ctx, s, c.claim, 0, false, nil)
				return err
			})
			return fmt.Errorf("recipes: queue %s: ack %s: %w: item removed by another client", c.q.path, c.item, ErrLost)
		case len(res) == 2 && errors.Is(res[1].Error, zk.ErrNoNode):
			c.done = true
			return fmt.Errorf("recipes: queue %s: ack %s: %w: claim deleted by another client", c.q.path, c.item, ErrLost)
		}
		return c.lost(sessionErr(s, err))
	}
}

// unknownOutcome is Ack's error when its transaction may have been
// carried out and nobody could read back whether it was.
func (c *Claim) unknownOutcome(err error) error {
	if c.q.s.alive() != nil {
		// The claim went with the session whatever the transaction did:
		// lost, with the item's fate unknown.
		c.done = true
		return fmt.Errorf("recipes: queue %s: ack %s: %w (the item was removed, or is back in the queue): %w: %w",
			c.q.path, c.item, ErrOutcomeUnknown, ErrLost, err)
	}
	c.unknown = true
	return fmt.Errorf("recipes: queue %s: ack %s: %w (call Ack again to find out): %w",
		c.q.path, c.item, ErrOutcomeUnknown, err)
}

// lost wraps an Ack failure, as ErrLost when the session ended.
func (c *Claim) lost(err error) error {
	if errors.Is(err, ErrSessionExpired) || errors.Is(err, ErrSessionClosed) {
		c.done = true
		return fmt.Errorf("recipes: queue %s: ack %s: %w: %w", c.q.path, c.item, ErrLost, err)
	}
	return fmt.Errorf("recipes: queue %s: ack %s: %w", c.q.path, c.item, err)
}

// Release gives the item back unprocessed: it deletes the claim, so the
// item is the next one claimed. An error wrapping ErrLost means the claim
// had gone with the session (another consumer may have claimed the item). An error means the claim is still held
// (Release again), or, wrapping ErrOutcomeUnknown, that its delete's reply
// was lost and could not be read back within the session timeout.
func (c *Claim) Release(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return fmt.Errorf("recipes: queue %s: release %s: %w", c.q.path, c.item, ErrNotHeld)
	}
	if err := deleteOwnedKnown(ctx, c.q.s, c.claim); err != nil {
		if sessionEnded(err) {
			// The claim went with the session, at a time this client does
			// not know: another consumer may have claimed the item since.
			c.done = true
			return fmt.Errorf("recipes: queue %s: release %s: %w: %w", c.q.path, c.item, ErrLost, err)
		}
		return fmt.Errorf("recipes: queue %s: release %s: %w", c.q.path, c.item, err)
	}
	c.done = true
	return nil
}
