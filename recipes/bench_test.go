package recipes

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/internal/procstat"
)

// BenchmarkFairVsGoZookeeper compares zkherd's fair Lock with
// go-zookeeper's zk.Lock in one run, on one ensemble (the shared test
// server), each contender its own session, hold time 0. It needs a fixed
// iteration count; b.N is the number of acquisitions measured per
// implementation:
//
//	go test -run '^$' -bench FairVsGoZookeeper -benchtime 3000x ./recipes/
//
// The two implementations take turns on the same sessions, in benchRounds
// rounds of b.N/benchRounds acquisitions (ABBA order, after warmRounds
// unmeasured rounds of the same size each), so that drift in the machine's
// load hits both alike. The warm-up is long because the server takes long
// to settle: at 1,000 contenders its CPU per round of the same work fell
// from 3.5 s to 1.2 s over the first four rounds (its JIT compiling the
// hot paths), so that with a single short warm-up round the first measured
// round, zkherd's, ran on a server half as fast as the later ones. Every
// round starts with all contenders queued behind a gate holder: the steady
// state of a full queue.
//
// Reported: acq/s per implementation and their ratio; handoff p50 per
// implementation (a holder's Unlock call to the next holder's Lock
// return); and, measured by zkherd's own trace in the same rounds, the
// p50 round trips of delete and getChildren and zkherd's handoff over their
// sum, and its requests per acquisition by kind; and each implementation's
// CPU per grant on the server and in this process.
//
// Each size runs twice: on the shared server (server=default), which
// enforces ACLs, so the fair Lock hands off by its release mark; and on a
// skipACL=yes server (server=skipACL), where the lock sees that it cannot
// trust the mark and hands off by listing, as go-zookeeper's does.
func BenchmarkFairVsGoZookeeper(b *testing.B) {
	for _, cfg := range []ensemble.ServerConfig{{}, {SkipACL: true}} {
		for _, n := range []int{100, 1000} {
			b.Run(fmt.Sprintf("server=%s/contenders=%d", cfg, n), func(b *testing.B) {
				benchFairVsGoZookeeper(b, configServers(b, cfg), n)
			})
		}
	}
}

func benchFairVsGoZookeeper(b *testing.B, servers []string, n int) {
	if b.N == 1 {
		return // the framework's probe run; see the doc comment
	}
	if b.N > 1_000_000 {
		b.Fatalf("b.N = %d: run with a fixed count, e.g. -benchtime 3000x", b.N)
	}
	sessions := openBenchSessions(b, n+1, servers)
	defer func() {
		for _, s := range sessions {
			s.Close()
		}
	}()
	impls := []benchImpl{zkherdImpl{}, goZookeeperImpl{}}
	per := max(1, b.N/benchRounds)
	for r := range warmRounds {
		for _, i := range abba(r, len(impls)) {
			runLockRound(b, sessions, impls[i], per)
		}
	}
	b.ResetTimer()
	results := make([]roundResult, len(impls))
	for r := range benchRounds {
		for _, i := range abba(r, len(impls)) {
			results[i].add(runLockRound(b, sessions, impls[i], per))
		}
	}
	b.StopTimer()
	zk, gz := results[0], results[1]
	b.ReportMetric(zk.rate(), "zkherd-acq/s")
	b.ReportMetric(gz.rate(), "gozk-acq/s")
	b.ReportMetric(zk.rate()/gz.rate(), "throughput-ratio")
	b.ReportMetric(ms(p50(zk.handoffs)), "zkherd-handoff-p50-ms")
	b.ReportMetric(ms(p50(gz.handoffs)), "gozk-handoff-p50-ms")
	b.ReportMetric(ms(quantile(zk.handoffs, 0.99)), "zkherd-handoff-p99-ms")
	b.ReportMetric(ms(quantile(gz.handoffs, 0.99)), "gozk-handoff-p99-ms")
	del, gc := p50(zk.deletes), p50(zk.lists)
	b.ReportMetric(ms(del), "delete-p50-ms")
	b.ReportMetric(ms(gc), "getChildren-p50-ms")
	b.ReportMetric(float64(p50(zk.handoffs))/float64(del+gc), "handoff/(delete+getChildren)")
	// CPU per grant (the shared server's JVM, and this process with its
	// sessions): where the time of a hand-off goes, on a machine both share.
	b.ReportMetric(zk.cpuPerGrant(zk.serverCPU), "zkherd-server-cpu-us/acq")
	b.ReportMetric(gz.cpuPerGrant(gz.serverCPU), "gozk-server-cpu-us/acq")
	b.ReportMetric(zk.cpuPerGrant(zk.clientCPU), "zkherd-client-cpu-us/acq")
	b.ReportMetric(gz.cpuPerGrant(gz.clientCPU), "gozk-client-cpu-us/acq")
	// zkherd's requests per acquisition, by kind (a release is one delete).
	for op, n := range zk.requests {
		b.ReportMetric(float64(n)/float64(zk.acquisitions), "zkherd-"+Op(op).String()+"/acq")
	}
	b.ReportMetric(0, "ns/op") // wall time includes queue set-up and drain: meaningless
}

// benchRounds is how many turns each implementation gets.
const benchRounds = 6

// warmRounds is how many unmeasured turns of the same size each
// implementation gets first.
const warmRounds = 4

// abba is the order in which n implementations take their turns in round
// r: forwards in even rounds, backwards in odd ones.
func abba(r, n int) []int {
	order := make([]int, n)
	for k := range order {
		order[k] = k
		if r%2 == 1 {
			order[k] = n - 1 - k
		}
	}
	return order
}

// roundResult accumulates measurements over rounds.
type roundResult struct {
	acquisitions             int
	elapsed                  time.Duration
	handoffs, deletes, lists []time.Duration
	// requests counts zkherd's requests by kind while measuring.
	requests [OpDelete + 1]int
	// granted counts the grants from the gate's opening to the drained
	// queue, and clientCPU and serverCPU the CPU time this process and
	// the ZooKeeper server spent meanwhile.
	granted              int
	clientCPU, serverCPU time.Duration
}

func (r *roundResult) add(o roundResult) {
	for op, n := range o.requests {
		r.requests[op] += n
	}
	r.acquisitions += o.acquisitions
	r.granted += o.granted
	r.clientCPU += o.clientCPU
	r.serverCPU += o.serverCPU
	r.elapsed += o.elapsed
	r.handoffs = append(r.handoffs, o.handoffs...)
	r.deletes = append(r.deletes, o.deletes...)
	r.lists = append(r.lists, o.lists...)
}

func (r *roundResult) rate() float64 { return float64(r.acquisitions) / r.elapsed.Seconds() }

// cpuPerGrant is CPU time per grant in microseconds.
func (r *roundResult) cpuPerGrant(cpu time.Duration) float64 {
	return float64(cpu.Microseconds()) / float64(max(1, r.granted))
}

// openBenchSessions opens n small-buffered sessions, a few at a time.
func openBenchSessions(b *testing.B, n int, servers []string) []*Session {
	b.Helper()
	sessions := make([]*Session, n)
	errs := make([]error, n)
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i := range sessions {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			// A listing of 1,000 Curator-style names is about 60 KiB.
			sessions[i], errs[i] = NewSession(ctx, servers, WithBufferSizes(16<<10, 128<<10))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			for _, s := range sessions {
				if s != nil {
					s.Close()
				}
			}
			b.Fatalf("session %d: %v", i, err)
		}
	}
	return sessions
}

// benchLocker is the part of a lock the benchmark drives.
type benchLocker interface {
	lock(ctx context.Context) error
	unlock(ctx context.Context) error
}

type benchImpl interface {
	name() string
	// watchesQueued is the number of watches the server holds once n
	// contenders wait behind a holder.
	watchesQueued(n int) int
	// make returns a lock on path; trace may be nil.
	make(s *Session, path string, trace *LockTrace) benchLocker
}

type zkherdImpl struct{}

func (zkherdImpl) name() string { return "zkherd" }

// Each waiter watches its predecessor (a data watch) after its own node (a
// child watch, which wchs does not count).
func (zkherdImpl) watchesQueued(n int) int { return n }
func (zkherdImpl) make(s *Session, path string, trace *LockTrace) benchLocker {
	var opts []LockOption
	if trace != nil {
		opts = append(opts, WithTrace(trace))
	}
	return zkherdLocker{NewLock(s, path, opts...)}
}

type zkherdLocker struct{ l *Lock }

func (z zkherdLocker) lock(ctx context.Context) error   { return z.l.Lock(ctx) }
func (z zkherdLocker) unlock(ctx context.Context) error { return z.l.Unlock(ctx) }

type goZookeeperImpl struct{}

func (goZookeeperImpl) name() string { return "go-zookeeper" }

// Each waiter watches its predecessor.
func (goZookeeperImpl) watchesQueued(n int) int { return n }
func (goZookeeperImpl) make(s *Session, path string, _ *LockTrace) benchLocker {
	return goZookeeperLocker{zk.NewLock(s.Conn(), path, zk.WorldACL(zk.PermAll))}
}

// goZookeeperLocker: zk.Lock takes no context.
type goZookeeperLocker struct{ l *zk.Lock }

func (g goZookeeperLocker) lock(context.Context) error   { return g.l.Lock() }
func (g goZookeeperLocker) unlock(context.Context) error { return g.l.Unlock() }

var benchRun atomic.Int64

// runLockRound has len(sessions)-1 contenders take the lock count times,
// starting from a full queue, and measures it.
func runLockRound(b *testing.B, sessions []*Session, impl benchImpl, count int) roundResult {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	n := len(sessions) - 1
	path := fmt.Sprintf("/zkherd-bench/%s-%d-%d", impl.name(), n, benchRun.Add(1))
	gate := impl.make(sessions[0], path, nil)
	if err := gate.lock(ctx); err != nil {
		b.Fatalf("gate lock: %v", err)
	}

	type stats struct {
		handoffs, deletes, lists []time.Duration
		requests                 [OpDelete + 1]int
		err                      error
	}
	var (
		grants      atomic.Int64
		started     atomic.Bool // the gate opened: measurements count
		stop        atomic.Bool
		lastRelease atomic.Int64 // UnixNano of the latest Unlock call
		end         atomic.Int64 // UnixNano of the count-th grant
		wg          sync.WaitGroup
		per         = make([]stats, n)
	)
	for i := range n {
		st := &per[i]
		trace := &LockTrace{Request: func(op Op, took time.Duration, err error) {
			if !started.Load() || stop.Load() {
				return
			}
			st.requests[op]++
			if err != nil {
				return
			}
			switch op {
			case OpDelete:
				st.deletes = append(st.deletes, took)
			case OpGetChildren:
				st.lists = append(st.lists, took)
			}
		}}
		l := impl.make(sessions[i+1], path, trace)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if err := l.lock(ctx); err != nil {
					st.err = err
					return
				}
				now := time.Now()
				if g := grants.Add(1); g <= int64(count) {
					st.handoffs = append(st.handoffs, now.Sub(time.Unix(0, lastRelease.Load())))
					if g == int64(count) {
						end.Store(now.UnixNano())
						stop.Store(true)
					}
				}
				lastRelease.Store(time.Now().UnixNano())
				if err := l.unlock(ctx); err != nil {
					st.err = err
					return
				}
			}
		}()
	}
	// Start once every contender waits behind the gate: its node created,
	// its listing done and its watch set (the server's watch count says
	// so), so that no queue-up traffic overlaps the measurement.
	deadline := time.Now().Add(5 * time.Minute)
	want := impl.watchesQueued(n)
	for {
		// A busy server may miss one four-letter-word deadline while 1,000
		// sessions queue up: that is no reason to give up; the set-up
		// deadline bounds the wait.
		got, err := serverWatches(sessions[0].Conn().Server())
		if err == nil && got >= want {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d watches set after 5 minutes (last wchs error: %v)", got, want, err)
		}
		time.Sleep(20 * time.Millisecond) // polling other sessions' progress
	}
	server := serverPID(sessions[0].Conn().Server())
	clientCPU0, serverCPU0 := procCPU(os.Getpid()), procCPU(server)
	start := time.Now()
	lastRelease.Store(start.UnixNano())
	started.Store(true)
	if err := gate.unlock(ctx); err != nil {
		b.Fatalf("gate unlock: %v", err)
	}
	wg.Wait() // the queue drains: every contender finishes its last round

	var r roundResult
	for i := range per {
		if per[i].err != nil {
			b.Fatalf("%s contender %d: %v", impl.name(), i, per[i].err)
		}
		r.handoffs = append(r.handoffs, per[i].handoffs...)
		r.deletes = append(r.deletes, per[i].deletes...)
		r.lists = append(r.lists, per[i].lists...)
		for op, n := range per[i].requests {
			r.requests[op] += n
		}
	}
	r.acquisitions = count
	r.elapsed = time.Unix(0, end.Load()).Sub(start)
	// Both from the gate's opening to the drained queue: every contender
	// was granted once more after the count-th grant (n more).
	r.granted = count + n
	r.clientCPU, r.serverCPU = procCPU(os.Getpid())-clientCPU0, procCPU(server)-serverCPU0
	return r
}

func p50(ds []time.Duration) time.Duration { return quantile(ds, 0.5) }

// quantile sorts ds and returns its q-quantile (0 for none).
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[min(len(ds)-1, int(q*float64(len(ds))))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// serverWatches asks a server for its total watch count ("wchs").
func serverWatches(addr string) (int, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, "wchs"); err != nil {
		return 0, err
	}
	out, err := io.ReadAll(conn)
	if err != nil {
		return 0, err
	}
	_, total, ok := strings.Cut(string(out), "Total watches:")
	if !ok {
		return 0, fmt.Errorf("wchs on %s: unexpected reply %q", addr, out)
	}
	return strconv.Atoi(strings.TrimSpace(total))
}

// procCPU is a process's user and system CPU time so far (0 if unknown,
// as for a pid that is not one of ours).
func procCPU(pid int) time.Duration {
	d, _ := procstat.CPU(pid)
	return d
}

// serverPID is the process ID of the test ensemble's member serving addr
// (0 if none of ours).
func serverPID(addr string) int {
	ensembles := []*ensemble.Ensemble{shared.ens}
	configured.mu.Lock()
	for _, e := range configured.ens {
		ensembles = append(ensembles, e)
	}
	configured.mu.Unlock()
	for _, e := range ensembles {
		if e == nil {
			continue
		}
		for _, m := range e.Members() {
			if m.ClientAddr == addr {
				return m.PID
			}
		}
	}
	return 0
}
