package faults

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkherd/zkherd/faultproxy"
	"github.com/zkherd/zkherd/scenarios"
)

// ErrNoSession is returned by Expire for a session no proxy has seen.
var ErrNoSession = errors.New("faults: unknown session")

// Network is one fault proxy per ensemble member, between the load clients
// and the servers: clients connect to Addrs instead of the servers.
type Network struct {
	servers []string
	proxies []*faultproxy.Proxy

	mu      sync.Mutex // serializes changes to armed
	armed   atomic.Pointer[[]*armedCut]
	lastCut [4]atomic.Int64 // the session last cut on each request kind (onIndex)
}

// NewNetwork starts a proxy in front of each server ("host:port"), in
// order: member i+1 is servers[i]. The proxies close when ctx ends or
// Close is called.
func NewNetwork(ctx context.Context, servers []string) (*Network, error) {
	if len(servers) == 0 {
		return nil, errors.New("faults: no server to put proxies in front of")
	}
	n := &Network{servers: slices.Clone(servers)}
	for _, s := range servers {
		p, err := faultproxy.New(ctx, s)
		if err != nil {
			n.Close()
			return nil, fmt.Errorf("faults: proxy for %s: %w", s, err)
		}
		p.OnRequest(n.hook(len(n.proxies) + 1))
		n.proxies = append(n.proxies, p)
	}
	return n, nil
}

// Addrs are the proxies' addresses, in member order: what clients connect to.
func (n *Network) Addrs() []string {
	out := make([]string, len(n.proxies))
	for i, p := range n.proxies {
		out[i] = p.Addr()
	}
	return out
}

// Servers are the servers behind the proxies, in member order.
func (n *Network) Servers() []string { return slices.Clone(n.servers) }

// Members is the number of proxies (one per member).
func (n *Network) Members() int { return len(n.proxies) }

// Proxy returns member id's proxy (1-based), nil if there is none.
func (n *Network) Proxy(id int) *faultproxy.Proxy {
	if id < 1 || id > len(n.proxies) {
		return nil
	}
	return n.proxies[id-1]
}

// Close closes every proxy, cutting every connection through them.
func (n *Network) Close() error {
	var errs []error
	for _, p := range n.proxies {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}

// selected returns member id's proxy, or every proxy for id 0.
func (n *Network) selected(id int) []*faultproxy.Proxy {
	if id == 0 {
		return n.proxies
	}
	if p := n.Proxy(id); p != nil {
		return []*faultproxy.Proxy{p}
	}
	return nil
}

// conn is one open client connection: which proxy, which connection.
type conn struct {
	proxy   *faultproxy.Proxy
	id      int
	session int64
}

// conns lists the open connections through member id's proxy (0: all).
func (n *Network) conns(id int) []conn {
	var out []conn
	for _, p := range n.selected(id) {
		for _, l := range p.Links() {
			out = append(out, conn{proxy: p, id: l.Conn, session: l.Session})
		}
	}
	return out
}

// Sessions returns the ids of the sessions with a connection open through
// the proxies now, sorted.
func (n *Network) Sessions() []int64 {
	var ids []int64
	for _, p := range n.proxies {
		for _, s := range p.Sessions() {
			ids = append(ids, s.ID)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// lookup finds what a proxy learnt of session id, preferring the proxy
// that carries it now; member is that proxy's member (1-based).
func (n *Network) lookup(id int64) (s faultproxy.Session, member int, ok bool) {
	for i, p := range n.proxies {
		got, found := p.LookupSession(id)
		if !found {
			continue
		}
		if !ok || (got.Conn != 0 && s.Conn == 0) {
			s, member, ok = got, i+1, true
		}
	}
	return s, member, ok
}

// reconnectWait bounds how long Expire waits for the client to try to
// reconnect (go-zookeeper waits up to a second between rounds of servers).
const reconnectWait = 2 * time.Second

// expireMargin is how long after the client noticed its connection drop
// (it tried to reconnect) Expire ends the session: time for the client's
// goroutines to act on the drop. A server expires a silent session a third
// of the session timeout after its client noticed, at the earliest.
const expireMargin = 100 * time.Millisecond

// Expire ends session id on the servers now. It cuts the session's
// connection and holds back its reconnection until the client has tried
// (or reconnectWait passed), so the client has seen its connection drop
// before the session ends (and expireMargin more), as happens to a
// partitioned client whose session times out; then it closes the session as that client (through
// the member the session was on, or another one that answers) and lets the
// reconnection through, which the server answers with "session expired".
// cut is when the client's connection was cut.
func (n *Network) Expire(ctx context.Context, id int64) (cut time.Time, err error) {
	s, member, ok := n.lookup(id)
	if !ok {
		return time.Time{}, fmt.Errorf("%w: 0x%x", ErrNoSession, id)
	}
	var releases []func()
	arrived := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for _, p := range n.proxies {
		seen, release := p.HoldReconnects(id)
		releases = append(releases, release)
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-seen:
				once.Do(func() { close(arrived) })
			case <-stop:
			}
		}()
	}
	defer func() {
		close(stop)
		wg.Wait()
		for _, r := range releases {
			r()
		}
		for _, p := range n.proxies {
			p.Forget(id)
		}
	}()
	cut = time.Now()
	for _, p := range n.proxies {
		p.CutSession(id)
	}
	t := time.NewTimer(reconnectWait)
	defer t.Stop()
	select {
	case <-arrived:
		t.Reset(expireMargin)
		select {
		case <-t.C:
		case <-ctx.Done():
			return cut, ctx.Err()
		}
	case <-t.C:
	case <-ctx.Done():
		return cut, ctx.Err()
	}
	// The member the session was on first, then the others; again for a
	// while if none serves (an election is under way).
	order := []int{member - 1}
	for i := range n.servers {
		if i != member-1 {
			order = append(order, i)
		}
	}
	deadline := time.Now().Add(closeRetry)
	for {
		var errs []error
		for _, i := range order {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := faultproxy.CloseSession(cctx, n.servers[i], s)
			cancel()
			if err == nil {
				return cut, nil
			}
			if errors.Is(err, faultproxy.ErrNoSession) {
				return cut, fmt.Errorf("%w: %w", ErrNoSession, err)
			}
			errs = append(errs, err)
			if ctx.Err() != nil {
				return cut, ctx.Err()
			}
		}
		if time.Now().After(deadline) {
			return cut, fmt.Errorf("faults: could not expire session 0x%x: %w", id, errors.Join(errs...))
		}
		t.Reset(100 * time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			return cut, ctx.Err()
		}
	}
}

// closeRetry bounds how long Expire keeps trying servers that do not serve.
const closeRetry = 5 * time.Second

// armedCut is one pending cut on a request kind.
type armedCut struct {
	on     string // scenarios.FaultOn*
	member int    // only requests through this member's proxy; 0: any
	fired  atomic.Bool
	onCut  func(member, conn int)
	// spare is the session cut last time on this kind, spared this time:
	// its retry of the same request is not cut again (on a quiet
	// ensemble, the retry can be the only such request for a while).
	spare int64
}

// hook is installed on every proxy: it cuts the connection of the first
// request matching an armed cut.
func (n *Network) hook(member int) func(faultproxy.Request) faultproxy.Action {
	return func(r faultproxy.Request) faultproxy.Action {
		armed := n.armed.Load()
		if armed == nil {
			return faultproxy.Forward
		}
		for _, a := range *armed {
			if !matches(a.on, r.Op) || (a.member != 0 && a.member != member) {
				continue
			}
			if r.Session != 0 && r.Session == a.spare {
				continue
			}
			if a.fired.CompareAndSwap(false, true) {
				n.lastCut[onIndex(a.on)].Store(r.Session)
				a.onCut(member, r.Conn)
				return faultproxy.CutAfter
			}
		}
		return faultproxy.Forward
	}
}

// armCut makes the next request of kind on (scenarios.FaultOn*), through
// member's proxy (0: any), cut its connection right after reaching the
// server (so it is carried out and its reply lost); onCut is called once,
// from the proxy's goroutine, when that happens. It replaces an earlier
// armed cut on the same kind and member that has not fired.
func (n *Network) armCut(on string, member int, onCut func(member, conn int)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var next []*armedCut
	if cur := n.armed.Load(); cur != nil {
		for _, a := range *cur {
			if (a.on != on || a.member != member) && !a.fired.Load() {
				next = append(next, a)
			}
		}
	}
	next = append(next, &armedCut{on: on, member: member, onCut: onCut, spare: n.lastCut[onIndex(on)].Load()})
	n.armed.Store(&next)
}

// disarm removes every armed cut.
func (n *Network) disarm() {
	n.mu.Lock()
	n.armed.Store(nil)
	n.mu.Unlock()
}

// matches reports whether a request with opcode op is one an armed cut on
// kind waits for: any create for creates; a delete or a multi (a queue's
// acknowledgement deletes the item and its claim in one transaction) for
// deletes; a setData; a multi.
func matches(on string, op int32) bool {
	switch on {
	case scenarios.FaultOnCreate:
		return faultproxy.IsCreate(op)
	case scenarios.FaultOnDelete:
		return op == faultproxy.OpDelete || op == faultproxy.OpMulti
	case scenarios.FaultOnSetData:
		return op == faultproxy.OpSetData
	case scenarios.FaultOnMulti:
		return op == faultproxy.OpMulti
	}
	return false
}

// onIndex indexes lastCut by request kind.
func onIndex(on string) int {
	return max(slices.Index(scenarios.FaultOns(), on), 0)
}
