package faultproxy

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Quorum packet types a leader sends to a follower
// (org.apache.zookeeper.server.quorum.Leader).
const (
	QuorumProposal = 2
	QuorumCommit   = 4
	QuorumPing     = 5
	// QuorumRevalidate answers a follower's check of a session that
	// (re)connects to it.
	QuorumRevalidate = 6
	QuorumSnap       = 15
	QuorumUpToDate   = 12
)

// A QuorumProxy sits on one ensemble member's link to another member's
// quorum port (the port a follower connects to its leader on): the
// member's configuration names the proxy's address instead of the other
// member's. With a lag set, it delays every packet the leader sends the
// follower (proposals, commits, sync replies, revalidations, in order) by
// the lag, except pings and session revalidations, which it passes on at
// once: the follower then applies the leader's transactions late, and so
// answers reads with stale data, while it keeps its sessions (their pings
// reach the leader at once), accepts a session that reconnects to it
// without waiting out the lag (as a member whose disk or apply pipeline is
// slow does; a client reconnecting after a lost reply then reads there
// before the write is applied), and the leader keeps it in the quorum. What the follower sends goes
// through untouched.
//
// It understands the quorum protocol's framing: a stream of jute
// QuorumPackets (int type, long zxid, buffer data, vector<Id> authinfo,
// with no length prefix), and, after a SNAP packet, one serialized
// database (sessions, ACL cache, nodes up to "/", then the signature).
// Pings pass first only once the follower is in sync (after UPTODATE):
// before that every packet keeps its place. A stream it cannot frame (a
// protocol it does not know) is passed on unchanged and undelayed from
// there on; Stats counts such links.
//
// A lag must stay well below the ensemble's syncLimit: a leader drops a
// follower whose acknowledgements are older than that, as it would a
// follower this slow in production.
type QuorumProxy struct {
	target string
	ln     net.Listener
	stop   func() bool

	lag atomic.Int64 // time.Duration

	delayed, passed, unframed atomic.Int64

	mu     sync.Mutex
	links  map[*qlink]struct{}
	closed bool
	wg     sync.WaitGroup
}

// QuorumStats counts what a QuorumProxy did.
type QuorumStats struct {
	// Delayed and Passed count the leader's packets held for the lag and
	// passed at once (pings, and everything while no lag is set).
	Delayed, Passed int64
	// Unframed counts links whose stream could not be framed (passed on
	// unchanged).
	Unframed int64
	// Links is the number of open links.
	Links int
}

// NewQuorum listens on a free loopback port and forwards every connection
// to target, a member's quorum address ("host:port"). It closes when ctx
// ends or Close is called.
func NewQuorum(ctx context.Context, target string) (*QuorumProxy, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listen: %w", err)
	}
	p := &QuorumProxy{target: target, ln: ln, links: make(map[*qlink]struct{})}
	p.stop = context.AfterFunc(ctx, func() { p.Close() })
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the "host:port" the member's configuration names.
func (p *QuorumProxy) Addr() string { return p.ln.Addr().String() }

// Target is the quorum address the proxy forwards to.
func (p *QuorumProxy) Target() string { return p.target }

// SetLag delays the leader's packets (but pings) by d from now on; 0
// passes them at once again. Packets already held keep their time, and
// order is always kept.
func (p *QuorumProxy) SetLag(d time.Duration) { p.lag.Store(int64(max(d, 0))) }

// Lag is the delay set now.
func (p *QuorumProxy) Lag() time.Duration { return time.Duration(p.lag.Load()) }

// Stats returns what the proxy did so far.
func (p *QuorumProxy) Stats() QuorumStats {
	p.mu.Lock()
	n := len(p.links)
	p.mu.Unlock()
	return QuorumStats{Delayed: p.delayed.Load(), Passed: p.passed.Load(), Unframed: p.unframed.Load(), Links: n}
}

// CutAll drops every link, both sides; the follower reconnects (and
// syncs with its leader again).
func (p *QuorumProxy) CutAll() int {
	p.mu.Lock()
	links := make([]*qlink, 0, len(p.links))
	for l := range p.links {
		links = append(links, l)
	}
	p.mu.Unlock()
	for _, l := range links {
		l.close()
	}
	return len(links)
}

// Close stops accepting, cuts every link and waits for the proxy's
// goroutines. Idempotent.
func (p *QuorumProxy) Close() error {
	p.stop()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.wg.Wait()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.CutAll()
	p.wg.Wait()
	return err
}

func (p *QuorumProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			return
		}
		l := &qlink{p: p, follower: c, done: make(chan struct{})}
		p.links[l] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go l.run()
	}
}

// qlink is one follower connection and its connection to the leader.
type qlink struct {
	p        *QuorumProxy
	follower net.Conn
	leader   net.Conn
	once     sync.Once
	done     chan struct{}
}

func (l *qlink) close() {
	l.once.Do(func() {
		close(l.done)
		l.follower.Close()
		l.p.mu.Lock()
		leader := l.leader
		l.p.mu.Unlock()
		if leader != nil {
			leader.Close()
		}
	})
}

// qunit is one packet (or a packet and the database after it) from the
// leader, with when it may be passed on.
type qunit struct {
	data   []byte
	due    time.Time
	prompt bool // a ping: jumps the held packets
}

func (l *qlink) run() {
	defer l.p.wg.Done()
	defer func() {
		l.close()
		l.p.mu.Lock()
		delete(l.p.links, l)
		l.p.mu.Unlock()
	}()
	var d net.Dialer
	leader, err := d.Dial("tcp", l.p.target)
	if err != nil {
		return
	}
	l.p.mu.Lock()
	l.leader = leader
	l.p.mu.Unlock()
	select {
	case <-l.done: // closed while dialling: close() missed the leader side
		leader.Close()
		return
	default:
	}
	units := make(chan qunit, 256)
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		io.Copy(leader, l.follower) // the follower's packets: untouched
		l.close()
	}()
	go func() { defer wg.Done(); l.readLeader(units) }()
	go func() { defer wg.Done(); l.write(units) }()
	wg.Wait()
}

// readLeader frames the leader's stream into units.
func (l *qlink) readLeader(out chan<- qunit) {
	defer close(out)
	r := &juteReader{r: bufio.NewReaderSize(l.leader, 64<<10)}
	synced := false
	for {
		typ, err := r.quorumPacket()
		if err != nil {
			if errors.Is(err, errUnframed) && len(r.buf) > 0 {
				l.p.unframed.Add(1)
				out <- qunit{data: r.take()}
				l.raw(r.r, out)
			} else {
				l.close()
			}
			return
		}
		if typ == QuorumSnap {
			if err := r.snapshot(); err != nil {
				if errors.Is(err, errUnframed) {
					l.p.unframed.Add(1)
					out <- qunit{data: r.take()}
					l.raw(r.r, out)
				} else {
					l.close()
				}
				return
			}
		}
		u := qunit{data: r.take()}
		lag := l.p.Lag()
		switch {
		case (typ == QuorumPing || typ == QuorumRevalidate) && synced:
			u.prompt = true
			l.p.passed.Add(1)
		case lag > 0:
			u.due = time.Now().Add(lag)
			l.p.delayed.Add(1)
		default:
			l.p.passed.Add(1)
		}
		if typ == QuorumUpToDate {
			synced = true
		}
		select {
		case out <- u:
		case <-l.done:
			return
		}
	}
}

// raw passes the rest of a stream it cannot frame on as it comes.
func (l *qlink) raw(r io.Reader, out chan<- qunit) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			select {
			case out <- qunit{data: append([]byte(nil), buf[:n]...)}:
			case <-l.done:
				return
			}
		}
		if err != nil {
			l.close()
			return
		}
	}
}

// write passes units on to the follower: each held one no earlier than
// its due time and after every unit held before it; a ping at once.
func (l *qlink) write(in <-chan qunit) {
	var held []qunit
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	broken := false
	send := func(b []byte) {
		if broken {
			return
		}
		if _, err := l.follower.Write(b); err != nil {
			broken = true
			l.close()
		}
	}
	for in != nil || len(held) > 0 {
		// Pass on what is due.
		for len(held) > 0 && !time.Now().Before(held[0].due) {
			send(held[0].data)
			held[0] = qunit{}
			held = held[1:]
		}
		var tc <-chan time.Time
		if len(held) > 0 {
			timer.Reset(time.Until(held[0].due))
			tc = timer.C
		}
		select {
		case u, ok := <-in:
			timer.Stop() // no stale value is received after Stop (Go 1.23+ timers)
			if !ok {
				in = nil
				if broken {
					return
				}
				continue
			}
			if u.prompt || (len(held) == 0 && u.due.IsZero()) {
				send(u.data)
				continue
			}
			held = append(held, u)
		case <-tc:
		case <-l.done:
			return
		}
	}
}

// errUnframed means the stream does not look like the quorum protocol.
var errUnframed = errors.New("faultproxy: not a quorum packet stream")

// maxQuorumUnit bounds one packet or serialized database.
const maxQuorumUnit = 1 << 30

// juteReader reads jute-serialized values and keeps the bytes it read.
type juteReader struct {
	r   *bufio.Reader
	buf []byte
}

// take returns the bytes read since the last take.
func (j *juteReader) take() []byte {
	b := j.buf
	j.buf = nil
	return b
}

func (j *juteReader) bytes(n int) ([]byte, error) {
	if n < 0 || len(j.buf)+n > maxQuorumUnit {
		return nil, errUnframed
	}
	start := len(j.buf)
	j.buf = append(j.buf, make([]byte, n)...)
	if _, err := io.ReadFull(j.r, j.buf[start:]); err != nil {
		return nil, err
	}
	return j.buf[start:], nil
}

func (j *juteReader) int32() (int32, error) {
	b, err := j.bytes(4)
	if err != nil {
		return 0, err
	}
	return int32(binary.BigEndian.Uint32(b)), nil
}

func (j *juteReader) int64() (int64, error) {
	b, err := j.bytes(8)
	if err != nil {
		return 0, err
	}
	return int64(binary.BigEndian.Uint64(b)), nil
}

// buffer reads a jute buffer or ustring (int length, -1 for null, then
// the bytes) and returns its bytes.
func (j *juteReader) buffer() ([]byte, error) {
	n, err := j.int32()
	if err != nil {
		return nil, err
	}
	if n == -1 {
		return nil, nil
	}
	return j.bytes(int(n))
}

// count reads a vector's length (-1 for null, read as 0).
func (j *juteReader) count() (int, error) {
	n, err := j.int32()
	if err != nil {
		return 0, err
	}
	if n < -1 {
		return 0, errUnframed
	}
	return max(int(n), 0), nil
}

// id reads an org.apache.zookeeper.data.Id (two ustrings).
func (j *juteReader) id() error {
	if _, err := j.buffer(); err != nil {
		return err
	}
	_, err := j.buffer()
	return err
}

// quorumPacket reads one QuorumPacket and returns its type.
func (j *juteReader) quorumPacket() (int32, error) {
	typ, err := j.int32()
	if err != nil {
		return 0, err
	}
	if typ < 0 || typ > 64 {
		return 0, errUnframed
	}
	if _, err := j.int64(); err != nil { // zxid
		return 0, err
	}
	if _, err := j.buffer(); err != nil { // data
		return 0, err
	}
	n, err := j.count() // authinfo
	if err != nil {
		return 0, err
	}
	for range n {
		if err := j.id(); err != nil {
			return 0, err
		}
	}
	return typ, nil
}

// statPersistedLen is a StatPersisted's size: czxid, mzxid, ctime, mtime
// (long), version, cversion, aversion (int), ephemeralOwner, pzxid (long).
const statPersistedLen = 4*8 + 3*4 + 2*8

// snapshot reads the database a leader sends after SNAP: the sessions
// (count, then id and timeout each), the ACL cache (count, then a key
// and a vector of ACLs each), the nodes (path, then data, ACL key and
// StatPersisted, until the path "/"), and the signature.
func (j *juteReader) snapshot() error {
	n, err := j.count()
	if err != nil {
		return err
	}
	for range n {
		if _, err := j.bytes(8 + 4); err != nil {
			return err
		}
	}
	if n, err = j.count(); err != nil {
		return err
	}
	for range n {
		if _, err := j.int64(); err != nil {
			return err
		}
		acls, err := j.count()
		if err != nil {
			return err
		}
		for range acls {
			if _, err := j.int32(); err != nil { // perms
				return err
			}
			if err := j.id(); err != nil {
				return err
			}
		}
	}
	for {
		path, err := j.buffer()
		if err != nil {
			return err
		}
		if string(path) == "/" {
			break
		}
		if _, err := j.buffer(); err != nil { // data
			return err
		}
		if _, err := j.bytes(8 + statPersistedLen); err != nil { // acl key, stat
			return err
		}
	}
	sig, err := j.buffer()
	if err != nil {
		return err
	}
	if string(sig) != "BenWasHere" {
		return errUnframed
	}
	return nil
}
