package recipes

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Listings too large for a contender's receive buffer.
//
// go-zookeeper gives every connection one receive buffer, allocated at its
// full size on every (re)connection, and drops the connection on a reply
// larger than that. A directory of 10,000 lock nodes lists in about 600 KB;
// 10,000 sessions each sized for it would hold 6 GB of buffers. Yet once a
// contender knows its predecessor it only creates, watches and deletes, and
// each of those replies is a few hundred bytes. A Lister is one session
// sized for large replies that lists directories for many small-buffered
// sessions (WithLister), and it batches: everyone who asks for a directory
// while a listing of it is on the wire is served by the next one. A stampede
// of 10,000 contenders on one lock then makes a few dozen listings instead
// of 10,000, and decodes each once. It also remembers the lock nodes the
// process's sessions created, so that most contenders of a stampede name
// their predecessor (the node one sequence below theirs) with no listing
// at all (createdBefore).
//
// Assumptions, each relied on where noted:
//   - A listing through another session is a snapshot of the directory at
//     some point after the request was sent, but the Lister's server may lag
//     behind the caller's (another member of the ensemble): a node the
//     caller has just created can be missing. listContaining checks for the
//     caller's node and, when it is missing, lists again after a sync, which
//     makes the Lister's server apply every write committed before it,
//     including the caller's create (whose reply the caller already has).
//   - Every listing a caller gets was requested after the caller asked: a
//     caller joins the batch that is not yet sent (lister.list), never one
//     on the wire, so its listing cannot predate its own create.
//   - A listing is shared between the callers of one batch and must be
//     treated as read-only (scanListing and findProtected only read it).
//   - The lock nodes' data is small: watching a predecessor with getData
//     returns its data through the contender's own buffer. zkherd's and
//     Curator's lock nodes hold at most an address or a short owner name;
//     a foreign node with large data fails that contender with
//     ErrReplyTooLarge instead of reconnecting for ever
//     (TestListerForeignPredecessorData).
//   - Child watches cannot be shared: the waiters of the herd-children lock,
//     the semaphore, the queue and the barrier set theirs with their own
//     getChildren, whose reply is the full listing, so their sessions still
//     need buffers sized for it. Only the listings without a watch (the fair
//     lock's, the protected create's recovery) go through the Lister.

// Lister lists directories for other sessions over its own session, which
// should have a receive buffer large enough for the largest directory
// listed (see WithBufferSizes). Give it to the small-buffered sessions with
// WithLister. Safe for concurrent use; it owns no goroutine while idle.
type Lister struct {
	s *Session

	mu   sync.Mutex
	dirs map[string]*dirListings

	sent atomic.Int64 // listings requested, for tests

	// names are the lock nodes this process's sessions created, by
	// directory and sequence (see createdBefore); guarded by mu.
	names map[string]map[int64]string
}

// maxNamesPerDir bounds the names remembered for one directory: past it
// they are forgotten (a lookup that misses costs a listing, nothing more).
const maxNamesPerDir = 1 << 16

// created remembers that a session of this process created the lock node
// name, sequence seq, in dir. A nil Lister remembers nothing.
func (l *Lister) created(dir string, seq int64, name string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.names[dir]
	if m == nil || len(m) >= maxNamesPerDir {
		m = make(map[int64]string)
		l.names[dir] = m
	}
	m[seq] = name
}

// createdBefore sets *pred to the node with sequence seq-1 in dir if a
// session of this process created it, and forgets it (only the node at seq
// waits on it). Assumption (Lock.acquire's): no sequence lies between
// seq-1 and seq, so that node is the caller's predecessor if it still
// exists, which the watch set on it next proves; if it is gone, the caller
// lists. In a stampede of contenders in one process, this names almost
// every predecessor without a listing.
func (l *Lister) createdBefore(dir string, seq int64, pred *string) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.names[dir]
	name, ok := m[seq-1]
	if ok {
		delete(m, seq-1)
		*pred = name
	}
	return ok
}

// dirListings is the batching state of one directory.
type dirListings struct {
	running bool       // a goroutine (lister.run) sends this directory's listings
	next    *listBatch // callers waiting for a listing not yet sent
}

// listBatch is one listing request and the callers it serves.
type listBatch struct {
	done     chan struct{} // closed once children and err are set
	children []string
	err      error
}

// NewLister returns a Lister that lists over s. Closing s ends it: later
// listings fail.
func NewLister(s *Session) *Lister {
	return &Lister{s: s, dirs: make(map[string]*dirListings), names: make(map[string]map[int64]string)}
}

// list returns dir's children from a listing sent after the call began.
func (l *Lister) list(ctx context.Context, dir string) ([]string, error) {
	l.mu.Lock()
	d := l.dirs[dir]
	if d == nil {
		d = &dirListings{}
		l.dirs[dir] = d
	}
	if d.next == nil {
		d.next = &listBatch{done: make(chan struct{})}
	}
	b := d.next
	if !d.running {
		d.running = true
		go l.run(dir, d)
	}
	l.mu.Unlock()
	select {
	case <-b.done:
		return b.children, b.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// run sends dir's listings one at a time, each for the callers that
// gathered while the one before was on the wire, and ends when nobody
// waits. It is the only goroutine that completes dir's batches.
func (l *Lister) run(dir string, d *dirListings) {
	for {
		l.mu.Lock()
		b := d.next
		if b == nil {
			d.running = false
			delete(l.dirs, dir)
			l.mu.Unlock()
			return
		}
		d.next = nil
		l.mu.Unlock()
		// Its callers each wait with their own ctx; the listing itself waits
		// for a dropped connection at most as long as the session can
		// survive one.
		ctx, cancel := context.WithTimeout(context.Background(), l.s.Timeout())
		l.sent.Add(1)
		b.children, _, b.err = childrenOf(ctx, l.s, dir)
		cancel()
		close(b.done)
	}
}

// listSynced lists dir after a sync, so that the listing holds every write
// committed before the call (unbatched: it is the rare path).
func (l *Lister) listSynced(ctx context.Context, dir string) ([]string, error) {
	err := retryConn(ctx, l.s, func() error {
		_, err := l.s.Conn().Sync(dir)
		return err
	})
	if err != nil {
		return nil, err
	}
	l.sent.Add(1)
	children, _, err := childrenOf(ctx, l.s, dir)
	return children, err
}

// WithLister makes the session's recipes list large directories through l
// (see Lister) instead of over their own connection, so that the session's
// receive buffer need only fit small replies. Only listings without a watch
// go through it: the fair Lock's and the protected create's recovery.
func WithLister(l *Lister) SessionOption {
	return func(c *sessionConfig) { c.lister = l }
}

// errListerEnded says that the Lister's own session ended, which is not the
// caller's session ending.
var errListerEnded = errors.New("recipes: the listing session (WithLister) ended")

// listerErr wraps an error of the Lister's session so that callers do not
// take it for their own session's end.
func listerErr(err error) error {
	if errors.Is(err, ErrSessionExpired) || errors.Is(err, ErrSessionClosed) {
		return fmt.Errorf("%w: %w", errListerEnded, err)
	}
	return err
}

// listContaining lists dir for a caller whose node ours ("" for none) is
// in it: over the session's own connection, or through its Lister, then
// again after a sync if ours is missing from that listing (the Lister's
// server may lag behind the caller's). Each listing counts as one
// getChildren request in tr.
func listContaining(ctx context.Context, s *Session, dir, ours string, tr *tracer) ([]string, error) {
	if s.lister == nil {
		var children []string
		err := retryConn(ctx, s, func() (err error) {
			start := time.Now()
			children, _, err = s.Conn().Children(dir)
			tr.request(OpGetChildren, start, err)
			return err
		})
		return children, err
	}
	start := time.Now()
	children, err := s.lister.list(ctx, dir)
	tr.request(OpGetChildren, start, err)
	if err != nil || ours == "" || slices.Contains(children, ours) {
		return children, listerErr(err)
	}
	return listSynced(ctx, s, dir, tr)
}

// listSynced lists dir so that the listing holds every write this session
// saw committed: over the session's own connection (a session reads its
// own writes), or through its Lister after a sync.
func listSynced(ctx context.Context, s *Session, dir string, tr *tracer) ([]string, error) {
	if s.lister == nil {
		return listContaining(ctx, s, dir, "", tr)
	}
	start := time.Now()
	children, err := s.lister.listSynced(ctx, dir)
	tr.request(OpGetChildren, start, err)
	return children, listerErr(err)
}
