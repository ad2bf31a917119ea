package distrib

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/internal/buildinfo"
	"github.com/zkherd/zkherd/internal/exit"
	"github.com/zkherd/zkherd/internal/znode"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/recipes"
	"github.com/zkherd/zkherd/scenarios"
)

var (
	// ErrNoRun means no run with that id exists on the servers: it never
	// started, or it finished and was removed.
	ErrNoRun = errors.New("no such run")
	// ErrStarted means the run's processes already met and started.
	ErrStarted = errors.New("run already started")
	// ErrFinished means the run is over.
	ErrFinished = errors.New("run already finished")
	// ErrFull means the run already has all its processes.
	ErrFull = errors.New("run already has all its processes")
	// ErrCancelled means the run was removed while this process waited.
	ErrCancelled = errors.New("run cancelled by the process that started it")
	// ErrStarterGone means the process that started the run died: its
	// session ended, and its owner mark with it.
	ErrStarterGone = errors.New("the process that started the run is gone")
	// ErrMissing means some processes never published their results.
	ErrMissing = errors.New("results missing")
	// ErrBadPlan is returned by Start for a plan that cannot be run.
	ErrBadPlan = errors.New("invalid plan")
	// ErrVersion means the run was started by another version of zkherd:
	// its plan and parts may not mean the same to this one.
	ErrVersion = errors.New("another zkherd version")
)

// Run states, in the plan.
const (
	StateWaiting  = "waiting"  // processes are joining
	StateRunning  = "running"  // every process arrived; the runs go on
	StateFinished = "finished" // the results are merged
)

// Plan is what a distributed run runs, as its starter wrote it.
type Plan struct {
	RunID string `json:"run_id"`
	// Processes is how many processes take part, the starter included.
	Processes int `json:"processes"`
	// Title names the scenario.
	Title string `json:"title"`
	// Runs are the scenario's runs (compare steps), every default applied.
	Runs  []scenarios.Run `json:"runs"`
	State string          `json:"state"`
	// Host and PID are the starter's.
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Created time.Time `json:"created"`
	// Version is the starter's zkherd version (buildinfo.Version); every
	// process must run the same (Join refuses another). Start fills it
	// when empty.
	Version string `json:"version"`
}

// maxPartSize bounds a Part: ZooKeeper's default jute.maxbuffer is 1 MiB.
const maxPartSize = 1000 << 10

// Member is one process's place in a distributed run.
type Member struct {
	// s is the coordination session (see sess); replaced by a new one
	// when it expires and open is set (retry.go).
	s      atomic.Pointer[recipes.Session]
	open   Reopen
	ownS   bool // s was opened here (by open): Finish and Leave close it
	chroot string
	root   string // the run's node, chroot included
	plan   Plan
	index  int
	node   string
	// roster is every process, as the starter saw them at the last
	// barrier.
	roster map[int]memberInfo
	// work, when set (UseWork), is a session on the servers under test,
	// which the coordination does not use (--coord-server): the shared
	// namespaces live there, below workChroot.
	work       *recipes.Session
	workChroot string
}

// UseWork says the run's clients work on other servers than the
// coordination's: s is a session on them, chroot their chroot. The
// starter checks and cleans the shared namespaces there.
func (m *Member) UseWork(s *recipes.Session, chroot string) { m.work, m.workChroot = s, chroot }

// workConn is a connection to the servers the clients work on, and
// their chroot.
func (m *Member) workConn() (*zk.Conn, string) {
	if m.work != nil {
		return m.work.Conn(), m.workChroot
	}
	return m.sess().Conn(), m.chroot
}

// runNode is the run's node below chroot.
func runNode(chroot, id string) string { return chroot + loadgen.Root + "/" + id }

// Start creates a distributed run for plan.Processes processes and makes
// this process its number 0, the one that merges the results. The run's
// id must not be in use.
func Start(ctx context.Context, s *recipes.Session, chroot string, plan Plan) (_ *Member, err error) {
	defer marked(&err)
	switch {
	case plan.Processes < 1:
		return nil, fmt.Errorf("%w: %d processes; want at least 1", ErrBadPlan, plan.Processes)
	case len(plan.Runs) == 0:
		return nil, fmt.Errorf("%w: no run", ErrBadPlan)
	case plan.RunID == "" || strings.ContainsAny(plan.RunID, "/ "):
		return nil, fmt.Errorf("%w: run id %q", ErrBadPlan, plan.RunID)
	}
	plan.State = StateWaiting
	plan.Host, _ = os.Hostname()
	plan.PID = os.Getpid()
	plan.Created = time.Now().UTC()
	plan.Version = cmp.Or(plan.Version, buildinfo.Version())
	data, err := json.Marshal(plan)
	if err != nil {
		return nil, err
	}
	root := runNode(chroot, plan.RunID)
	conn := s.Conn()
	if err := znode.CreateParents(conn, root, zk.WorldACL(zk.PermAll)); err != nil {
		return nil, err
	}
	// The run's node, its owner mark (loadgen.OwnerMark: a later run
	// removes the node of a run whose mark is gone) and this process's
	// member node, number 0, at once: a process that joins as soon as the
	// run's node appears cannot take number 0 (its sequential node comes
	// after m-0000000000).
	info := ownInfo(0)
	acl := zk.WorldACL(zk.PermAll)
	node := root + "/members/m-0000000000"
	if _, err := conn.Multi(
		&zk.CreateRequest{Path: root, Data: data, Acl: acl},
		&zk.CreateRequest{Path: root + "/" + loadgen.OwnerMark, Acl: acl, Flags: zk.FlagEphemeral},
		&zk.CreateRequest{Path: root + "/members", Acl: acl},
		&zk.CreateRequest{Path: root + "/steps", Acl: acl},
		&zk.CreateRequest{Path: node, Data: info, Acl: acl, Flags: zk.FlagEphemeral}); err != nil {
		if errors.Is(err, zk.ErrNodeExists) {
			return nil, exit.Input("%w: run id %s is in use on the servers; choose another {run-id}", ErrBadPlan, plan.RunID)
		}
		return nil, fmt.Errorf("create %s: %w", root, err)
	}
	m := &Member{chroot: chroot, root: root, plan: plan, node: node}
	m.s.Store(s)
	return m, nil
}

// Join finds run id and makes this process one of its members. It fails
// with ErrNoRun, ErrStarted, ErrFinished or ErrFull, touching nothing, when
// the run cannot be joined.
func Join(ctx context.Context, s *recipes.Session, chroot, id string) (_ *Member, err error) {
	defer marked(&err)
	root := runNode(chroot, id)
	data, _, err := s.Conn().Get(root)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, fmt.Errorf("%w: %s (it was never started on these servers, or it finished and was removed)", ErrNoRun, id)
	}
	if err != nil {
		return nil, fmt.Errorf("read run %s: %w", id, err)
	}
	var plan Plan
	if err := json.Unmarshal(data, &plan); err != nil || plan.Processes < 1 {
		return nil, fmt.Errorf("%w: %s is a load run of one process, not a distributed run", ErrNoRun, id)
	}
	if v := buildinfo.Version(); plan.Version != v {
		return nil, fmt.Errorf("%w: run %s was started by zkherd %s (on %s), this is zkherd %s; run the same zkherd binary in every process", ErrVersion, id, plan.Version, plan.Host, v)
	}
	switch plan.State {
	case StateRunning:
		return nil, fmt.Errorf("%w: %s started with its %d processes; processes must join before it starts", ErrStarted, id, plan.Processes)
	case StateFinished:
		return nil, fmt.Errorf("%w: %s", ErrFinished, id)
	}
	m := &Member{chroot: chroot, root: root, plan: plan}
	m.s.Store(s)
	if err := m.register(); err != nil {
		return nil, err
	}
	return m, nil
}

// register creates this process's member node and finds its number.
func (m *Member) register() error {
	conn := m.sess().Conn()
	node, err := conn.Create(m.root+"/members/m-", nil, zk.FlagEphemeralSequential, zk.WorldACL(zk.PermAll))
	if errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("%w: %s", ErrNoRun, m.plan.RunID)
	}
	if err != nil {
		return fmt.Errorf("register in run %s: %w", m.plan.RunID, err)
	}
	children, _, err := conn.Children(m.root + "/members")
	if err != nil {
		conn.Delete(node, -1)
		return fmt.Errorf("list members of run %s: %w", m.plan.RunID, err)
	}
	slices.Sort(children)
	m.index = slices.Index(children, path.Base(node))
	m.node = node
	if m.index >= m.plan.Processes {
		conn.Delete(node, -1)
		return fmt.Errorf("%w: %s has its %d processes", ErrFull, m.plan.RunID, m.plan.Processes)
	}
	// The node says whose it is, so that the starter can name a process
	// whose node expired (it died).
	if _, err := conn.Set(node, ownInfo(m.index), -1); err != nil {
		conn.Delete(node, -1)
		return fmt.Errorf("register in run %s: %w", m.plan.RunID, err)
	}
	return nil
}

// memberInfo is a member node's data.
type memberInfo struct {
	Index int    `json:"index"`
	Host  string `json:"host"`
	PID   int    `json:"pid"`
}

// ownInfo is this process's member node data as process number index.
func ownInfo(index int) []byte {
	host, _ := os.Hostname()
	info, _ := json.Marshal(memberInfo{Index: index, Host: host, PID: os.Getpid()}) // plain fields: cannot fail
	return info
}

// alive returns the members whose nodes are there, by index.
func (m *Member) alive() (map[int]memberInfo, error) {
	conn := m.sess().Conn()
	children, _, err := conn.Children(m.root + "/members")
	if err != nil {
		return nil, err
	}
	out := map[int]memberInfo{}
	for _, c := range children {
		data, _, err := conn.Get(m.root + "/members/" + c)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var mi memberInfo
		if json.Unmarshal(data, &mi) == nil {
			out[mi.Index] = mi
		}
	}
	return out, nil
}

// Plan is the run's plan.
func (m *Member) Plan() Plan { return m.plan }

// Index is this process's number, from 0 (the starter).
func (m *Member) Index() int { return m.index }

// Namespace is the namespace run step's clients share, below the chroot
// (for loadgen.Options.Namespace).
func (m *Member) Namespace(step int) string {
	return strings.TrimPrefix(m.stepDir(step), m.chroot) + "/work"
}

func (m *Member) stepDir(step int) string { return m.root + "/steps/" + strconv.Itoa(step) }

// watchRun returns a ctx that ends when the run ends under this process:
// with ErrCancelled when the starter removed it or marked it finished,
// with ErrStarterGone when the starter died (its session ended, and the
// run's owner mark with it); stop releases it.
func (m *Member) watchRun(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		for ctx.Err() == nil {
			ok, _, ch, err := m.sess().Conn().ExistsW(m.root + "/" + loadgen.OwnerMark)
			if err == nil && !ok {
				cancel(m.whyGone())
				return
			}
			if err != nil {
				t := time.NewTimer(100 * time.Millisecond)
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
				}
				continue
			}
			select {
			case <-ch:
			case <-ctx.Done():
			}
		}
	}()
	return ctx, func() { cancel(nil) }
}

// whyGone says why the run's owner mark is gone: the starter removed
// the run or finished it (ErrCancelled), or it died (ErrStarterGone).
func (m *Member) whyGone() error {
	data, _, err := m.sess().Conn().Get(m.root)
	if errors.Is(err, zk.ErrNoNode) {
		return ErrCancelled
	}
	var plan Plan
	if err == nil && json.Unmarshal(data, &plan) == nil && plan.State == StateFinished {
		return ErrCancelled
	}
	return ErrStarterGone
}

// Barrier waits until every process has arrived at run step, or timeout
// passes, or the run is cancelled. The starter marks the run started once
// the first barrier opens.
func (m *Member) Barrier(ctx context.Context, step int, timeout time.Duration) (err error) {
	defer marked(&err)
	conn := m.sess().Conn()
	dir := m.stepDir(step)
	for _, d := range []string{dir, dir + "/barrier", dir + "/parts", dir + "/live"} {
		if _, err := conn.Create(d, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			if errors.Is(err, zk.ErrNoNode) {
				return fmt.Errorf("%w: %s", ErrCancelled, m.plan.RunID)
			}
			return fmt.Errorf("create %s: %w", d, err)
		}
	}
	wctx, stop := m.watchRun(ctx)
	defer stop()
	tctx, cancel := context.WithTimeout(wctx, timeout)
	defer cancel()
	err = recipes.NewBarrier(m.sess(), dir+"/barrier", m.plan.Processes).Wait(tctx)
	switch {
	case err == nil:
	case errors.Is(context.Cause(wctx), ErrCancelled):
		return fmt.Errorf("%w: %s", ErrCancelled, m.plan.RunID)
	case errors.Is(context.Cause(wctx), ErrStarterGone):
		return m.starterGone()
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case tctx.Err() != nil:
		n := m.arrived(step)
		return fmt.Errorf("run %s: only %d of %d processes arrived within %v", m.plan.RunID, n, m.plan.Processes, timeout)
	default:
		return fmt.Errorf("run %s: barrier: %w", m.plan.RunID, err)
	}
	if m.index == 0 {
		// Every process is registered: note who they are, to name one
		// that dies later.
		if roster, err := m.alive(); err == nil {
			m.roster = roster
		}
		if step == 0 {
			return m.setState(StateRunning)
		}
	}
	return nil
}

// arrived counts the processes waiting at step's barrier.
func (m *Member) arrived(step int) int {
	children, _, err := m.sess().Conn().Children(m.stepDir(step) + "/barrier")
	if err != nil {
		return 0
	}
	return len(slices.DeleteFunc(children, func(c string) bool { return c == recipes.BarrierReady }))
}

func (m *Member) setState(state string) error {
	m.plan.State = state
	data, err := json.Marshal(m.plan)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), finishTimeout)
	defer cancel()
	if err := m.retry(ctx, func(conn *zk.Conn) error { _, err := conn.Set(m.root, data, -1); return err }); err != nil {
		return fmt.Errorf("mark run %s %s: %w", m.plan.RunID, state, err)
	}
	return nil
}

// Publish writes this process's results for run step. A lost connection
// does not lose them: the create is retried until ctx ends (see retry),
// and a create whose reply was lost, which may have been applied, is
// read back: the node holding these very bytes is this publish's, any
// other content an error. So a part is published once, and success is
// never claimed unverified.
func (m *Member) Publish(ctx context.Context, step int, p *Part) (err error) {
	defer marked(&err)
	p.Process = m.index
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	if len(data) > maxPartSize {
		return fmt.Errorf("results of %d bytes do not fit in a znode (at most %d)", len(data), maxPartSize)
	}
	node := fmt.Sprintf("%s/parts/p-%03d", m.stepDir(step), m.index)
	err = m.retry(ctx, func(conn *zk.Conn) error {
		_, err := conn.Create(node, data, 0, zk.WorldACL(zk.PermAll))
		if !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
		there, _, err := conn.Get(node)
		if err != nil {
			return err
		}
		if !bytes.Equal(there, data) {
			return fmt.Errorf("%s holds other results than this process's: was process %d started twice?", node, m.index)
		}
		return nil // an earlier attempt's create, whose reply was lost
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, zk.ErrNoNode):
		return fmt.Errorf("%w: %s", ErrCancelled, m.plan.RunID)
	}
	return fmt.Errorf("publish to %s: %w", node, err)
}

// Collect waits until every process published its results for run step,
// or timeout passes, or every process that has not published is gone (its
// member node expired: it died), and returns them. With some missing it
// returns those there are and an error wrapping ErrMissing; lost names
// the processes that died without publishing, with their member info
// as last seen.
func (m *Member) Collect(ctx context.Context, step int, timeout time.Duration) (_ []*Part, lost map[int]memberInfo, err error) {
	defer marked(&err)
	dir := m.stepDir(step) + "/parts"
	// Every request below is retried over lost connections (retry.go)
	// until the deadline.
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	// A process counts as lost once its member node has been gone for a
	// coordination session's timeout: a process whose session expired
	// while the servers could not be reached (a large run's end) makes
	// its node again in a new session (retry.go) and publishes, and one
	// gone for good (killed) stays gone.
	gone := map[int]time.Time{}
	for {
		var children []string
		var ch <-chan zk.Event
		err := m.retry(dctx, func(conn *zk.Conn) (err error) {
			children, _, ch, err = conn.ChildrenW(dir)
			return err
		})
		if err != nil && ctx.Err() == nil && dctx.Err() != nil {
			// The deadline passed while the servers could not be
			// reached: what was seen last is all there is.
			rctx, cancel := context.WithTimeout(ctx, finishTimeout)
			defer cancel()
			parts, rerr := m.read(rctx, dir, children)
			if rerr != nil {
				return nil, nil, fmt.Errorf("list %s: %w", dir, err)
			}
			return parts, nil, fmt.Errorf("%w: %d of %d processes published their results within %v (%v)", ErrMissing, len(parts), m.plan.Processes, timeout, err)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("list %s: %w", dir, err)
		}
		if len(children) >= m.plan.Processes {
			parts, err := m.read(dctx, dir, children)
			return parts, nil, err
		}
		if lost, err := m.lostOf(children); err == nil && goneFor(gone, lost, m.sess().Timeout()) && len(lost)+len(children) >= m.plan.Processes {
			parts, err := m.read(dctx, dir, children)
			if err != nil {
				return nil, nil, err
			}
			return parts, lost, fmt.Errorf("%w: %d of %d processes published their results; the others are gone", ErrMissing, len(parts), m.plan.Processes)
		}
		select {
		case <-ch:
		case <-tick.C:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-dctx.Done():
			rctx, cancel := context.WithTimeout(ctx, finishTimeout)
			defer cancel()
			parts, err := m.read(rctx, dir, children)
			if err != nil {
				return nil, nil, err
			}
			return parts, nil, fmt.Errorf("%w: %d of %d processes published their results within %v", ErrMissing, len(parts), m.plan.Processes, timeout)
		}
	}
}

// goneFor notes in since when each process of lost was first seen gone
// (forgetting those seen again), and reports whether every one of them,
// and at least one, has been gone for grace.
func goneFor(since map[int]time.Time, lost map[int]memberInfo, grace time.Duration) bool {
	now := time.Now()
	for i := range since {
		if _, ok := lost[i]; !ok {
			delete(since, i)
		}
	}
	all := len(lost) > 0
	for i := range lost {
		if _, ok := since[i]; !ok {
			since[i] = now
		}
		all = all && now.Sub(since[i]) >= grace
	}
	return all
}

// lostOf returns the processes that have not published (no p-<index>
// among parts) and whose member node is gone, as the roster knew them.
func (m *Member) lostOf(parts []string) (map[int]memberInfo, error) {
	now, err := m.alive()
	if err != nil {
		return nil, err
	}
	lost := map[int]memberInfo{}
	for i := range m.plan.Processes {
		if _, ok := now[i]; ok || slices.Contains(parts, fmt.Sprintf("p-%03d", i)) {
			continue
		}
		mi, ok := m.roster[i]
		if !ok {
			mi = memberInfo{Index: i, Host: "unknown host"}
		}
		lost[i] = mi
	}
	return lost, nil
}

// read reads the parts named children of dir, each read retried over lost
// connections until ctx ends.
func (m *Member) read(ctx context.Context, dir string, children []string) ([]*Part, error) {
	slices.Sort(children)
	var parts []*Part
	for _, c := range children {
		var data []byte
		err := m.retry(ctx, func(conn *zk.Conn) (err error) {
			data, _, err = conn.Get(dir + "/" + c)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("read %s/%s: %w", dir, c, err)
		}
		var p Part
		if err := json.Unmarshal(data, &p); err != nil {
			return nil, fmt.Errorf("%s/%s is not a process's results: %w", dir, c, err)
		}
		parts = append(parts, &p)
	}
	return parts, nil
}

// Finish ends the run: it is marked finished, then removed with everything
// below it (and /zkherd/runs and /zkherd when empty).
func (m *Member) Finish(ctx context.Context) (err error) {
	defer marked(&err)
	defer m.closeOwn()
	if m.index == 0 {
		m.setState(StateFinished)
	}
	return m.remove()
}

// finishTimeout bounds the retries of a run's last requests (marking it
// finished, removing it, reading the parts after the collect's deadline).
//
// Each of the two (marking, removing) waits at most this long for servers
// it cannot reach, so that a run whose servers are gone still ends
// within a minute; a run left on the servers is removed by a later run
// once its owner mark has expired.
const finishTimeout = 30 * time.Second

// closeOwn closes the coordination session this member opened itself
// (retry.go), if any.
func (m *Member) closeOwn() {
	if m.ownS {
		m.sess().Close()
	}
}

// Leave removes this process's member node (a process that is not the
// starter, done with the run). The last process to leave a run whose
// starter died removes the run: nobody else will.
func (m *Member) Leave() {
	defer m.closeOwn()
	if m.node == "" {
		return
	}
	conn := m.sess().Conn()
	conn.Delete(m.node, -1)
	if ok, _, err := conn.Exists(m.root + "/" + loadgen.OwnerMark); err != nil || ok {
		return
	}
	if left, _, err := conn.Children(m.root + "/members"); err == nil && len(left) == 0 {
		m.remove()
	}
}

// starterGone is the error of a process whose starter died.
func (m *Member) starterGone() error {
	return fmt.Errorf("%w: run %s was started by %s (pid %d), whose session ended; this process stopped and left nothing behind",
		ErrStarterGone, m.plan.RunID, m.plan.Host, m.plan.PID)
}

func (m *Member) remove() error {
	if m.work != nil {
		// The shared namespaces on the servers under test.
		if err := removeRun(m.work.Conn(), runNode(m.workChroot, m.plan.RunID), m.workChroot); err != nil {
			return fmt.Errorf("remove run %s from the servers under test: %w", m.plan.RunID, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), finishTimeout)
	defer cancel()
	if err := m.retry(ctx, func(conn *zk.Conn) error { return removeRun(conn, m.root, m.chroot) }); err != nil {
		return fmt.Errorf("remove run %s: %w", m.plan.RunID, err)
	}
	return nil
}

// removeRun removes root and everything below it, then its parents up to
// chroot while they are empty.
func removeRun(conn *zk.Conn, root, chroot string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := loadgen.RemoveTree(ctx, conn, root); err != nil {
		return err
	}
	for p := path.Dir(root); p != "/" && p != chroot && p != "."; p = path.Dir(p) {
		if err := conn.Delete(p, -1); err != nil {
			break
		}
	}
	return nil
}
