package recipes

import (
	"slices"
	"strconv"
	"strings"
)

// Node names: the one place that knows how recipe children are named, by
// zkherd and by the clients it interoperates with. The inspector uses it to
// draw waiter chains for any of them.

// ProtectedPrefix starts every protected node name: "_c_<guid>-<name><seq>"
// (Curator's and go-zookeeper's convention; zkherd writes Curator's).
const ProtectedPrefix = "_c_"

// Name parts written after the protected prefix, one per recipe. zkherd uses
// Curator's, so Curator and zkherd processes share locks.
const (
	PrefixLock      = "lock-"    // mutex (Curator InterProcessMutex), leader selector
	PrefixRead      = "__READ__" // read side of a read/write lock
	PrefixWrite     = "__WRIT__" // write side of a read/write lock
	PrefixLease     = "lease-"   // semaphore lease (under <path>/leases)
	PrefixLatch     = "latch-"   // leader latch / election candidate
	PrefixQueueItem = "qn-"      // queue item (ZooKeeper's own queue recipe name)
)

// HerdNodeName is the single ephemeral node every HerdLock contender tries
// to create under the lock's path.
const HerdNodeName = "herd-lock"

// SeqDigits is the width of the sequence suffix the server appends.
const SeqDigits = 10

// Layout says which client's naming convention a node follows.
type Layout string

const (
	// LayoutCurator: "_c_<uuid>-<name><seq>", uuid in 8-4-4-4-12 form.
	// Apache Curator writes it, and so does zkherd.
	LayoutCurator Layout = "curator"
	// LayoutGoZookeeper: "_c_<32 hex>-<name><seq>" (go-zookeeper's
	// CreateProtectedEphemeralSequential, used by its zk.Lock with "lock-").
	LayoutGoZookeeper Layout = "go-zookeeper"
	// LayoutKazoo: "<32 hex>__lock__<seq>" or "<32 hex>__rlock__<seq>"
	// (Python kazoo's Lock, ReadLock, WriteLock, Election), and
	// "entry-<priority>-<seq>" (its Queue and LockingQueue items).
	LayoutKazoo Layout = "kazoo"
	// LayoutZooKeeper: "x-<sessionId>-<seq>" (the lock recipe shipped with
	// ZooKeeper, zookeeper-recipes-lock's WriteLock).
	LayoutZooKeeper Layout = "zookeeper"
	// LayoutSequential: any other "<prefix><seq>", e.g. "lock-" from the
	// ZooKeeper docs, "qn-" queues, "n_" elections, Curator's "queue-".
	LayoutSequential Layout = "sequential"
	// LayoutHerd: zkherd's HerdLock node, HerdNodeName, with no sequence.
	LayoutHerd Layout = "zkherd-herd"
)

// Kind is what a node stands for in its recipe.
type Kind string

const (
	KindLock      Kind = "lock"       // exclusive: mutex node, kazoo write lock
	KindRead      Kind = "read"       // shared: read side of a read/write lock
	KindWrite     Kind = "write"      // exclusive: write side of a read/write lock
	KindLease     Kind = "lease"      // one of N semaphore leases
	KindLatch     Kind = "latch"      // leader latch / election candidate
	KindElection  Kind = "election"   // ZooKeeper's election recipe ("n_")
	KindQueueItem Kind = "queue-item" // queue entry; nobody waits on it
	KindOther     Kind = "other"      // sequential, but no known recipe name
)

// Node is one parsed child name. Strings share the memory of Name.
type Node struct {
	Name   string // the child name as listed
	Layout Layout
	Kind   Kind
	// Seq is the server-assigned sequence suffix; -1 for the herd node.
	Seq int64
	// Prefix is Name without the sequence suffix.
	Prefix string
	// GUID is the per-attempt id of a protected or kazoo name ("" otherwise).
	GUID string
	// SessionID is the owner encoded in a ZooKeeper-recipe name (0 otherwise).
	SessionID int64
}

// ParseNode recognises a child name written by any supported client.
// ok is false for names no layout matches.
func ParseNode(name string) (Node, bool) {
	if name == HerdNodeName {
		return Node{Name: name, Layout: LayoutHerd, Kind: KindLock, Seq: -1, Prefix: name}, true
	}
	seq, ok := parseSeq(name)
	if !ok {
		return Node{}, false
	}
	prefix := name[:len(name)-SeqDigits]
	n := Node{Name: name, Seq: seq, Prefix: prefix}
	switch {
	case strings.HasPrefix(prefix, ProtectedPrefix):
		rest := prefix[len(ProtectedPrefix):]
		switch {
		case len(rest) > 36 && isUUID(rest[:36]) && rest[36] == '-':
			n.Layout, n.GUID, n.Kind = LayoutCurator, rest[:36], kindOf(rest[37:])
		case len(rest) > 32 && isHex(rest[:32]) && rest[32] == '-':
			n.Layout, n.GUID, n.Kind = LayoutGoZookeeper, rest[:32], kindOf(rest[33:])
		default:
			return Node{}, false
		}
	case len(prefix) > 32 && isHex(prefix[:32]) && strings.HasPrefix(prefix[32:], "__"):
		switch prefix[32:] {
		case "__lock__":
			n.Kind = KindLock
		case "__rlock__":
			n.Kind = KindRead
		default:
			return Node{}, false
		}
		n.Layout, n.GUID = LayoutKazoo, prefix[:32]
	case strings.HasPrefix(prefix, "x-") && strings.HasSuffix(prefix, "-") && len(prefix) >= 3:
		id, err := strconv.ParseInt(prefix[2:len(prefix)-1], 10, 64)
		if err != nil {
			return Node{}, false
		}
		n.Layout, n.Kind, n.SessionID = LayoutZooKeeper, KindLock, id
	case isKazooEntry(prefix):
		n.Layout, n.Kind = LayoutKazoo, KindQueueItem
	default:
		if strings.ContainsRune(prefix, '/') {
			return Node{}, false
		}
		n.Layout, n.Kind = LayoutSequential, kindOf(prefix)
	}
	return n, true
}

// isKazooEntry: "entry-<priority, 3 digits>-", kazoo's Queue and
// LockingQueue item prefix.
func isKazooEntry(prefix string) bool {
	return len(prefix) == 10 && strings.HasPrefix(prefix, "entry-") && prefix[9] == '-' &&
		isDigits(prefix[6:9])
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseSeq reads the 10-digit sequence suffix.
func parseSeq(name string) (int64, bool) {
	if len(name) < SeqDigits {
		return 0, false
	}
	var seq int64
	for _, c := range []byte(name[len(name)-SeqDigits:]) {
		if c < '0' || c > '9' {
			return 0, false
		}
		seq = seq*10 + int64(c-'0')
	}
	return seq, true
}

// kindOf maps the recipe name part (after any GUID) to a Kind.
func kindOf(name string) Kind {
	switch name {
	case PrefixLock, "__lock__":
		return KindLock
	case PrefixRead, "read-", "__rlock__":
		return KindRead
	case PrefixWrite, "write-":
		return KindWrite
	case PrefixLease:
		return KindLease
	case PrefixLatch:
		return KindLatch
	case "n_":
		return KindElection
	case PrefixQueueItem, "queue-", "entry-":
		return KindQueueItem
	}
	return KindOther
}

// hexDigit marks the bytes isHex accepts; a table because ParseNode runs
// over every child of a listing on every wake-up.
var hexDigit = func() (t [256]bool) {
	for _, c := range "0123456789abcdefABCDEF" {
		t[c] = true
	}
	return t
}()

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !hexDigit[s[i]] {
			return false
		}
	}
	return true
}

// isUUID checks the 8-4-4-4-12 form.
func isUUID(s string) bool {
	return len(s) == 36 && s[8] == '-' && s[13] == '-' && s[18] == '-' && s[23] == '-' &&
		isHex(s[:8]) && isHex(s[9:13]) && isHex(s[14:18]) && isHex(s[19:23]) && isHex(s[24:])
}

// ParseChildren parses a directory listing: recognised nodes sorted by
// sequence (the herd node first; ties, which only mixed directories can
// have, by name), and the names no layout matches, in listing order.
func ParseChildren(names []string) (nodes []Node, unrecognised []string) {
	nodes = make([]Node, 0, len(names))
	for _, name := range names {
		if n, ok := ParseNode(name); ok {
			nodes = append(nodes, n)
		} else {
			unrecognised = append(unrecognised, name)
		}
	}
	slices.SortFunc(nodes, compareNodes)
	return nodes, unrecognised
}

func compareNodes(a, b Node) int {
	if a.Seq != b.Seq {
		if a.Seq < b.Seq {
			return -1
		}
		return 1
	}
	return strings.Compare(a.Name, b.Name)
}

// Who waits on whom. Each function takes nodes sorted as ParseChildren
// returns them and the index of a contender, and returns the index of the
// one node that contender should watch under the recipe's rule, or -1 when
// it should watch none (it holds, or, for queue items, nobody waits). The
// inspector compares this with the watches the servers report to flag
// waiters that watch the wrong node (a herd in the making).

// MutexPredecessor: the node just before i (fair lock, leader latch).
func MutexPredecessor(nodes []Node, i int) int {
	if i <= 0 || i >= len(nodes) {
		return -1
	}
	return i - 1
}

// ReadWritePredecessor: a reader waits for the nearest preceding exclusive
// node (writer or plain lock node); a writer waits for the node just before
// it, reader or writer.
func ReadWritePredecessor(nodes []Node, i int) int {
	if i <= 0 || i >= len(nodes) {
		return -1
	}
	if nodes[i].Kind != KindRead {
		return i - 1
	}
	for j := i - 1; j >= 0; j-- {
		if nodes[j].Kind != KindRead {
			return j
		}
	}
	return -1
}

// SemaphorePredecessor: with leases leases, the contender at i holds a lease
// when i < leases, and otherwise waits for the node at i-leases.
func SemaphorePredecessor(nodes []Node, i, leases int) int {
	if leases < 1 {
		leases = 1
	}
	if i < leases || i >= len(nodes) {
		return -1
	}
	return i - leases
}

// Predecessor picks the rule from the node's kind: leases use the semaphore
// rule with leases leases, queue items wait on nothing, and everything else
// the read/write rule (which, with no readers present, is the mutex rule).
func Predecessor(nodes []Node, i, leases int) int {
	if i < 0 || i >= len(nodes) {
		return -1
	}
	switch nodes[i].Kind {
	case KindLease:
		return SemaphorePredecessor(nodes, i, leases)
	case KindQueueItem:
		return -1
	}
	return ReadWritePredecessor(nodes, i)
}

// Holds reports whether the contender at i holds under the kind's rule
// (it waits on nobody). Queue items never hold.
func Holds(nodes []Node, i, leases int) bool {
	if i < 0 || i >= len(nodes) || nodes[i].Kind == KindQueueItem {
		return false
	}
	return Predecessor(nodes, i, leases) == -1
}
