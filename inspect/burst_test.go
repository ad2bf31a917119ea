package inspect

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/ensemble/enstest"
)

// TestSnapshotReadsOneAtATime: a snapshot's reads of the known lock and
// queue directories went 4 at a time on the session (pipelineDepth), and
// the headless exporter's 20 still directories, due together, were a
// burst that other clients' writes met at the server (docs/BENCHMARKS.md:
// writes in the 10 ms after such an exists were among the slowest 1% 2.3
// times as often, single paced requests of the walk 1.0 times). They go
// one at a time now (snapshotDepth): the session never has more than one
// of a snapshot's requests outstanding.
func TestSnapshotReadsOneAtATime(t *testing.T) {
	ens := enstest.Start(t, 1)
	admin := connect(t, ens.Servers())
	mustCreate(t, admin, "/locks", nil, 0, open)
	const dirs = 12
	for i := range dirs {
		d := mustCreate(t, admin, fmt.Sprintf("/locks/l-%02d", i), nil, 0, open)
		mustCreate(t, admin, d+"/lock-", nil, zk.FlagEphemeral|zk.FlagSequence, open)
	}
	proxy := newRequestCounter(t, ens.Servers()[0])
	// No walk after the first (RescanEvery), no watch lists: the
	// snapshots' own reads are all that goes on the session.
	in := openInspector(t, Options{Servers: []string{proxy.addr}, PollInterval: 200 * time.Millisecond, NoWatches: true,
		RescanEvery: 100000, ScanRoots: []string{"/locks"}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		s := in.Snapshot(ctx)
		if ctx.Err() != nil {
			t.Fatal("the walk never found the lock directories")
		}
		if !s.Scanning && len(s.Locks) == dirs {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	proxy.maxOut.Store(0)
	for range 5 {
		s := in.Snapshot(ctx)
		if len(s.Locks) != dirs {
			t.Fatalf("%d locks, want %d", len(s.Locks), dirs)
		}
	}
	if got := proxy.maxOut.Load(); got != 1 {
		t.Errorf("at most %d requests outstanding on the session during snapshots, want 1", got)
	}
}

// requestCounter is a TCP proxy to a ZooKeeper server that counts the
// requests outstanding on each session (pings and watch events aside)
// and keeps the most seen; four-letter words pass through uncounted.
type requestCounter struct {
	addr   string
	maxOut atomic.Int64
}

func newRequestCounter(t *testing.T, server string) *requestCounter {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rc := &requestCounter{addr: l.Addr().String()}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", server)
			if err != nil {
				c.Close()
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				rc.serve(c, s)
			}()
		}
	}()
	return rc
}

func (rc *requestCounter) serve(c, s net.Conn) {
	defer c.Close()
	defer s.Close()
	var head [4]byte
	if _, err := io.ReadFull(c, head[:]); err != nil {
		return
	}
	if head[0] >= 'a' && head[0] <= 'z' { // a four-letter word
		s.Write(head[:])
		go io.Copy(c, s)
		io.Copy(s, c)
		return
	}
	var out atomic.Int64
	frames := func(r io.Reader, w io.Writer, first []byte, each func(xid int32)) {
		defer c.Close()
		defer s.Close()
		connect := true // the first frame each way has no xid
		for {
			var n [4]byte
			if first != nil {
				copy(n[:], first)
				first = nil
			} else if _, err := io.ReadFull(r, n[:]); err != nil {
				return
			}
			body := make([]byte, binary.BigEndian.Uint32(n[:]))
			if _, err := io.ReadFull(r, body); err != nil {
				return
			}
			if !connect && len(body) >= 4 {
				each(int32(binary.BigEndian.Uint32(body)))
			}
			connect = false
			if _, err := w.Write(append(n[:], body...)); err != nil {
				return
			}
		}
	}
	go frames(s, c, nil, func(xid int32) {
		if xid >= 0 {
			out.Add(-1)
		}
	})
	frames(c, s, head[:], func(xid int32) {
		if xid >= 0 { // not a ping (-2) nor auth (-4)
			now := out.Add(1)
			for m := rc.maxOut.Load(); now > m && !rc.maxOut.CompareAndSwap(m, now); m = rc.maxOut.Load() {
			}
		}
	})
}
