package loadgen

import (
	"bufio"
	"encoding/binary"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkherd/zkherd/metrics"
)

// The wire tap sits between go-zookeeper and its TCP connection (through
// recipes.WithDialer) and reads the ZooKeeper protocol as it passes. It
// times every request from the moment it leaves the client to the moment
// its reply arrives, counts requests by kind, and timestamps watch
// notifications, without any hook in the recipes: the same measures for
// every recipe, including ones written by others.
//
// go-zookeeper writes each packet with one Write call (4-byte length,
// request header, body) and reads replies with io.ReadFull, which may split
// a packet over several Read calls, so replies are parsed by a small state
// machine. ZooKeeper answers a session's requests in order, so pending
// requests are a FIFO.

// ZooKeeper opcodes (jute's ZooDefs.OpCode).
const (
	opCreate          = 1
	opDelete          = 2
	opExists          = 3
	opGetData         = 4
	opSetData         = 5
	opGetChildren     = 8
	opSync            = 9
	opGetChildren2    = 12
	opCheck           = 13
	opMulti           = 14
	opCreate2         = 15
	opCreateContainer = 19
	opCreateTTL       = 21
	opClose           = -11
	opSetAuth         = 100
	opSetWatches      = 101
)

// Watch event types (jute's Watcher.Event.EventType).
const (
	evNodeCreated         = 1
	evNodeDeleted         = 2
	evNodeDataChanged     = 3
	evNodeChildrenChanged = 4
)

// opNames name the requests counted in reports; other opcodes count as "other".
var opNames = map[int32]string{
	opCreate: "create", opCreate2: "create", opCreateContainer: "create", opCreateTTL: "create",
	opDelete: "delete", opExists: "exists", opGetData: "get_data", opSetData: "set_data",
	opGetChildren: "get_children", opGetChildren2: "get_children", opSync: "sync",
	opCheck: "check", opMulti: "multi", opSetAuth: "set_auth", opSetWatches: "set_watches",
}

// requestKinds is the order reports list request counts in.
var requestKinds = []string{"create", "delete", "exists", "get_data", "set_data",
	"get_children", "sync", "check", "multi", "set_auth", "set_watches", "other"}

func requestKindIndex(op int32) int {
	name, ok := opNames[op]
	if !ok {
		name = "other"
	}
	for i, k := range requestKinds {
		if k == name {
			return i
		}
	}
	return len(requestKinds) - 1
}

// phaseOf says which latency phase a request's round trip is recorded in;
// "" for none.
func phaseOf(op int32, watch, deletes bool) metrics.Phase {
	switch op {
	case opCreate, opCreate2, opCreateContainer, opCreateTTL:
		return metrics.Create
	case opDelete:
		return metrics.Delete
	case opMulti:
		if deletes {
			return metrics.Delete
		}
	case opGetChildren, opGetChildren2:
		return metrics.GetChildren
	case opExists, opGetData:
		if watch {
			return metrics.WatchSet
		}
	}
	return ""
}

// wireStats are the run-wide counters every tapped connection adds to.
type wireStats struct {
	requests [12]atomic.Int64 // indexed like requestKinds
	total    atomic.Int64     // every request (pings, close and handshakes excluded)
	packets  atomic.Int64     // every packet sent by clients, pings included
	dialErrs atomic.Int64
	resets   atomic.Int64 // connections the server closed before answering the handshake

	deletes deleteLog
}

func (w *wireStats) byKind() map[string]int64 {
	m := make(map[string]int64)
	for i, k := range requestKinds {
		if n := w.requests[i].Load(); n > 0 {
			m[k] = n
		}
	}
	return m
}

// deleteLog remembers when delete requests left clients, by path and by
// parent directory ("dir/"), so a watch notification for that path (node
// deleted) or directory (children changed) can be turned into a
// notification lag. A path can be deleted again and again (the herd lock's
// node is), so each key keeps its last few deletions and a notification
// is matched with the first deletion after its watch was set. Entries
// older than deleteLogKeep are pruned by the run's ticker.
type deleteLog struct {
	mu sync.Mutex
	at map[string][]deletion // oldest first, at most deletionsKept
}

type deletion struct {
	at time.Time
	by *tap // the deleting client, whose own watch on its node is no wake-up
}

const (
	deleteLogKeep = 30 * time.Second
	deletionsKept = 8
)

func (d *deleteLog) note(path string, t time.Time, by *tap) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.at == nil {
		d.at = make(map[string][]deletion)
	}
	d.add(path, deletion{t, by})
	if i := strings.LastIndexByte(path, '/'); i > 0 {
		d.add(path[:i]+"/", deletion{t, by})
	}
}

func (d *deleteLog) add(key string, e deletion) {
	l := d.at[key]
	if len(l) == deletionsKept {
		l = append(l[:0], l[1:]...)
	}
	d.at[key] = append(l, e)
}

// since returns how long before now the deletion of key that a watch set
// at watched saw happened: the first deletion after watched (the latest
// one before now when watched is unknown), by another client than by.
func (d *deleteLog) since(key string, watched, now time.Time, by *tap) (time.Duration, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var (
		found deletion
		ok    bool
	)
	for _, e := range d.at[key] {
		if e.at.After(now) {
			break
		}
		if !watched.IsZero() && e.at.Before(watched) {
			continue
		}
		found, ok = e, true
		if !watched.IsZero() {
			break
		}
	}
	if !ok || found.by == by {
		return 0, false
	}
	return now.Sub(found.at), true
}

func (d *deleteLog) prune(now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for k, l := range d.at {
		if now.Sub(l[len(l)-1].at) > deleteLogKeep {
			delete(d.at, k)
		}
	}
}

// tap is one client's instrumentation; it outlives reconnections.
type tap struct {
	stats *wireStats
	shard *metrics.Shard
	seen  seen // what the client does and watches (waiters.go)
	// wakeups counts the watch notifications that woke this client while
	// it waited (seen.fired), over all its sessions.
	wakeups atomic.Int64
}

// wrap returns c instrumented by t.
func (t *tap) wrap(c net.Conn) *tapConn {
	return &tapConn{Conn: c, tap: t}
}

type pending struct {
	xid     int32
	op      int32
	watch   bool
	deletes bool // a delete, or a multi that deletes (a fair lock's release, a queue's ack)
	sent    time.Time
}

// tapConn is one TCP connection of a client.
type tapConn struct {
	net.Conn
	tap *tap
	// onEarlyClose is called when the connection ends before the server
	// answered the handshake.
	onEarlyClose func()

	mu         sync.Mutex
	handshaken bool                 // the connect request was written
	watches    map[string]time.Time // when a watch on a path (dir + "/" for children) was set
	pend       []pending            // requests awaiting a reply, oldest first from head
	head       int

	gotConnect atomic.Bool // the connect response was read
	early      atomic.Bool // onEarlyClose was called

	// Reply parser state and read buffer, touched only by the reading
	// goroutine.
	br   *bufio.Reader
	hdr  []byte // the packet being assembled: length prefix, then the head of the body
	need int    // bytes of the body still to come
	keep int    // how many body bytes to keep in hdr
}

// maxWatchesTracked bounds the watch-set times one connection keeps.
const maxWatchesTracked = 256

// headKeep bounds how much of a reply is kept to parse: the reply header
// (16 bytes) and a watch event's type, state and path.
const headKeep = 16 + 12 + 512

func (c *tapConn) Write(p []byte) (int, error) {
	now := time.Now()
	c.noteWrite(p, now)
	n, err := c.Conn.Write(p)
	if err != nil {
		c.checkEarly()
	}
	return n, err
}

// checkEarly reports a connection that failed before the server answered
// the handshake: what a server does to a connection over its
// maxClientCnxns limit.
func (c *tapConn) checkEarly() {
	if c.gotConnect.Load() || c.early.Swap(true) {
		return
	}
	c.tap.stats.resets.Add(1)
	if c.onEarlyClose != nil {
		c.onEarlyClose()
	}
}

func (c *tapConn) noteWrite(p []byte, now time.Time) {
	st := c.tap.stats
	st.packets.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.handshaken {
		c.handshaken = true // the connect request has no request header
		return
	}
	if len(p) < 12 {
		return
	}
	xid := int32(binary.BigEndian.Uint32(p[4:8]))
	op := int32(binary.BigEndian.Uint32(p[8:12]))
	if xid < 0 || op == opClose {
		return // pings and the like
	}
	st.total.Add(1)
	st.requests[requestKindIndex(op)].Add(1)
	path, rest := readString(p[12:])
	watch := len(rest) > 0 && rest[0] != 0 && (op == opExists || op == opGetData || op == opGetChildren || op == opGetChildren2)
	deletes := false
	switch {
	case op == opDelete && path != "":
		st.deletes.note(path, now, c.tap)
		c.tap.seen.deleted(path)
		deletes = true
	case op == opMulti:
		// A multi's ops follow the request header directly (no path).
		for _, d := range multiDeletes(p[12:]) {
			st.deletes.note(d, now, c.tap)
			c.tap.seen.deleted(d)
			deletes = true
		}
	}
	if watch {
		key := path
		if op == opGetChildren || op == opGetChildren2 {
			key += "/"
		}
		if c.watches == nil || len(c.watches) > maxWatchesTracked {
			// Watches that never fired (their node was gone before they
			// were set) are forgotten wholesale now and then.
			c.watches = make(map[string]time.Time)
		}
		if _, set := c.watches[key]; !set {
			c.watches[key] = now // a watch fires once, for the first change after it was first set
		}
		c.tap.seen.watch(key, now)
	}
	c.pend = append(c.pend, pending{xid: xid, op: op, watch: watch, deletes: deletes, sent: now})
}

// multiDeletes returns the paths a multi request deletes. b is the
// request's body: ops, each a header (type int32, done bool, err int32)
// and its request, until a header marked done. An op it cannot parse ends
// the scan.
func multiDeletes(b []byte) []string {
	var out []string
	for len(b) >= 9 {
		typ := int32(binary.BigEndian.Uint32(b))
		if b[4] != 0 {
			break // done
		}
		b = b[9:]
		var path string
		path, b = readString(b)
		if b == nil {
			break
		}
		switch typ {
		case opDelete:
			out = append(out, path)
			b = skip(b, 4) // version
		case opCheck:
			b = skip(b, 4)
		case opSetData:
			b = skip(skipBuffer(b), 4)
		case opCreate, opCreate2, opCreateContainer, opCreateTTL:
			b = skipBuffer(b)
			b = skipACLs(b)
			b = skip(b, 4) // flags
			if typ == opCreateTTL {
				b = skip(b, 8)
			}
		default:
			return out
		}
		if b == nil {
			break
		}
	}
	return out
}

// skip drops n bytes; nil when b is shorter.
func skip(b []byte, n int) []byte {
	if len(b) < n {
		return nil
	}
	return b[n:]
}

// skipBuffer drops a jute buffer (int32 length, bytes; -1 for null).
func skipBuffer(b []byte) []byte {
	if len(b) < 4 {
		return nil
	}
	n := int32(binary.BigEndian.Uint32(b))
	if n < 0 {
		return b[4:]
	}
	return skip(b[4:], int(n))
}

// skipACLs drops a jute vector of ACLs (int32 count; perms int32, scheme
// and id strings each).
func skipACLs(b []byte) []byte {
	if len(b) < 4 {
		return nil
	}
	n := int32(binary.BigEndian.Uint32(b))
	b = b[4:]
	for range max(n, 0) {
		if b = skip(b, 4); b == nil {
			return nil
		}
		for range 2 {
			if _, b = readString(b); b == nil {
				return nil
			}
		}
	}
	return b
}

// readString reads a jute string (int32 length, bytes).
func readString(b []byte) (string, []byte) {
	if len(b) < 4 {
		return "", nil
	}
	n := int32(binary.BigEndian.Uint32(b))
	if n < 0 || int(n) > len(b)-4 {
		return "", nil
	}
	return string(b[4 : 4+n]), b[4+n:]
}

// readBuffer is each connection's read buffer: go-zookeeper reads a
// reply's 4-byte length and then its body, two system calls per reply
// without it; a small reply and its length now come in one. Larger reads
// (long listings) bypass it. Assumption: a lock client's replies (a watch
// event, a created path, a stat, a multi's results) are 100-300 bytes, so
// 512 bytes hold one with its length; a longer reply costs one more read.
// Every idle connection holds this buffer (issue 13: 2 KiB was 20 MiB of
// live heap at 10,000 sessions).
const readBuffer = 512

func (c *tapConn) Read(p []byte) (int, error) {
	if c.br == nil {
		c.br = bufio.NewReaderSize(c.Conn, readBuffer)
	}
	n, err := c.br.Read(p)
	if n > 0 {
		c.noteRead(p[:n], time.Now())
	}
	if err != nil {
		c.checkEarly()
	}
	return n, err
}

// noteRead feeds received bytes to the reply parser.
func (c *tapConn) noteRead(b []byte, now time.Time) {
	for len(b) > 0 {
		if c.need == 0 && len(c.hdr) < 4 {
			k := min(4-len(c.hdr), len(b))
			c.hdr = append(c.hdr, b[:k]...)
			b = b[k:]
			if len(c.hdr) == 4 {
				c.need = int(binary.BigEndian.Uint32(c.hdr))
				c.keep = min(c.need, headKeep)
				if c.need == 0 {
					c.packet(now)
				}
			}
			continue
		}
		k := min(c.need, len(b))
		if kept := len(c.hdr) - 4; kept < c.keep {
			c.hdr = append(c.hdr, b[:min(k, c.keep-kept)]...)
		}
		c.need -= k
		b = b[k:]
		if c.need == 0 {
			c.packet(now)
		}
	}
}

// packet handles one complete reply (its head is in c.hdr[4:]).
func (c *tapConn) packet(now time.Time) {
	body := c.hdr[4:]
	defer func() { c.hdr = c.hdr[:0] }()
	if !c.gotConnect.Load() {
		c.gotConnect.Store(true)
		return
	}
	if len(body) < 16 {
		return
	}
	xid := int32(binary.BigEndian.Uint32(body[0:4]))
	switch {
	case xid == -1:
		c.watchEvent(body[16:], now)
	case xid >= 0:
		c.reply(xid, body, now)
	}
}

// reply matches a reply (body: header, then the head of its payload) with
// its request.
func (c *tapConn) reply(xid int32, body []byte, now time.Time) {
	c.mu.Lock()
	var req pending
	found := false
	for c.head < len(c.pend) {
		req = c.pend[c.head]
		c.head++
		if req.xid == xid {
			found = true
			break
		}
	}
	if c.head == len(c.pend) {
		c.pend, c.head = c.pend[:0], 0
	}
	c.mu.Unlock()
	if !found {
		return
	}
	switch req.op {
	case opCreate, opCreate2, opCreateContainer, opCreateTTL:
		// A successful create's reply starts with the created path.
		if len(body) >= 16 && binary.BigEndian.Uint32(body[12:16]) == 0 {
			if p, _ := readString(body[16:]); p != "" {
				c.tap.seen.created(p)
			}
		}
	}
	if ph := phaseOf(req.op, req.watch, req.deletes); ph != "" && c.tap.shard != nil {
		c.tap.shard.Record(ph, now.Sub(req.sent))
	}
}

func (c *tapConn) watchEvent(b []byte, now time.Time) {
	if len(b) < 8 {
		return
	}
	typ := int32(binary.BigEndian.Uint32(b[0:4]))
	path, _ := readString(b[8:])
	key := path
	if typ == evNodeChildrenChanged {
		key = path + "/"
	}
	if c.tap.seen.fired(key) {
		c.tap.wakeups.Add(1)
	}
	if c.tap.shard == nil {
		return
	}
	c.mu.Lock()
	watched := c.watches[key]
	delete(c.watches, key)
	c.mu.Unlock()
	// NodeDataChanged counts too: a fair lock's release writes its node in
	// the transaction that deletes it, and the successor hears of that.
	if typ != evNodeDeleted && typ != evNodeChildrenChanged && typ != evNodeDataChanged {
		return
	}
	if lag, ok := c.tap.stats.deletes.since(key, watched, now, c.tap); ok {
		c.tap.shard.Record(metrics.NotificationLag, lag)
	}
}
