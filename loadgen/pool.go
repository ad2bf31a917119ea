package loadgen

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/connstr"
	"github.com/zkherd/zkherd/faultproxy"
	"github.com/zkherd/zkherd/internal/exit"
	"github.com/zkherd/zkherd/internal/inert"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/oracle"
	"github.com/zkherd/zkherd/recipes"
)

// client is one simulated client: one session at a time (a new one
// replaces an expired one), its share of the metrics, and its wire tap.
type client struct {
	idx   int
	slot  int // which lock, queue role, barrier group... (workload-defined)
	shard *metrics.Shard
	tap   *tap
	hist  *oracle.Buffer // this client's operations (the runner's history)

	sess atomic.Pointer[recipes.Session]

	// pause stops this client as a paused process would be (pause-client;
	// nil in runs without it): its connections neither read nor write,
	// and its loop parks at its next step (parkIfPaused). pauses counts
	// the pauses begun; holding says a grant is held (from the grant to
	// the release's end), for PauseClient's pick.
	pause   *faultproxy.Pauser
	pauses  atomic.Int64
	holding atomic.Bool
}

func (c *client) session() *recipes.Session { return c.sess.Load() }

// wakeups is every watch notification that woke this client while it
// waited, over all its sessions (seen.fired).
func (c *client) wakeups() int64 { return c.tap.wakeups.Load() }

// sessionParams are what every client session is opened with.
type sessionParams struct {
	// tls, when set, is the servers' TLS settings: the dialer runs the
	// handshake (Options.TLS).
	tls            *tls.Config
	servers        []string
	opts           []recipes.SessionOption
	timeout        time.Duration
	sendBuf        int
	recvBuf        int
	sourceAddrs    int
	connectTimeout time.Duration
	// name names the values the user gave in advice (Options.Name).
	name func(input string) string
	// lister, when set, lists large directories for every client session,
	// whose recvBuf then only fits small replies (see recipes.Lister).
	lister *recipes.Lister
	// serverUp reports whether the server answers another, established
	// session: then connections it cuts at once are refused on purpose
	// (maxClientCnxns), not cut by a server that is starting or down.
	serverUp func() bool
	// maxCnxns, when set, reads the servers' maxClientCnxns from their
	// conf (the same value on every server, or an error).
	maxCnxns func(ctx context.Context) (string, error)
}

// loopbackServers reports whether every server is a literal IPv4 loopback
// address, which any 127.0.0.x source address can reach.
func loopbackServers(servers []string) bool {
	for _, s := range servers {
		host, _, err := net.SplitHostPort(s)
		if err != nil {
			return false
		}
		ip := net.ParseIP(host)
		if ip == nil || ip.To4() == nil || !ip.IsLoopback() {
			return false
		}
	}
	return len(servers) > 0
}

// sourceAddrCount is how many source addresses to spread clients over.
func sourceAddrCount(requested, clients int, servers []string) int {
	if !loopbackServers(servers) {
		return 1
	}
	n := requested
	if n <= 0 {
		n = (clients + ConnsPerSourceAddr - 1) / ConnsPerSourceAddr
	}
	return max(1, min(n, 254))
}

// sourceAddr returns client i's local address, nil to let the kernel pick.
func sourceAddr(i, addrs int) *net.TCPAddr {
	if addrs <= 1 {
		return nil
	}
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(1+i%addrs))}
}

// errEarlyClose is the cause set when the server keeps closing a client's
// connections before answering its handshake.
var errEarlyClose = errors.New("closed right after connect")

// earlyClosesToGiveUp is how many handshakes the server must cut before a
// session open gives up.
const earlyClosesToGiveUp = 3

// dialer returns a zk.Dialer for client c that binds its source address,
// runs the TLS handshake when the run has TLS settings, taps the
// connection, and calls refused once the server has cut enough
// handshakes. The tap reads ZooKeeper's packets (the waiters' watches,
// the wake-ups), so it sits above TLS: over a session's own TLS
// (recipes.WithTLS) it would read ciphertext, and the dashboard's waiter
// chain and the wake-ups were empty on TLS runs.
func (p *sessionParams) dialer(c *client, refused func()) zk.Dialer {
	local := sourceAddr(c.idx, p.sourceAddrs)
	var early atomic.Int32
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		d := net.Dialer{Timeout: max(timeout, 2*time.Second)}
		if local != nil {
			d.LocalAddr = local
		}
		conn, err := d.Dial(network, address)
		if err == nil && p.tls != nil {
			ctx, cancel := context.WithTimeout(context.Background(), d.Timeout)
			conn, err = connstr.Handshake(ctx, conn, p.tls, address)
			cancel()
		}
		if err != nil {
			c.tap.stats.dialErrs.Add(1)
			return nil, err
		}
		tc := c.tap.wrap(conn)
		tc.onEarlyClose = func() {
			if early.Add(1) == earlyClosesToGiveUp && refused != nil {
				refused()
			}
		}
		return tc, nil
	}
}

// dialOptions are the session options that make c's session dial through
// p.dialer (and c's Pauser, if it has one): the dialer, and no TLS of the
// session's own when the dialer runs the handshake (it must come after any
// recipes.WithTLS).
func (p *sessionParams) dialOptions(c *client, refused func()) []recipes.SessionOption {
	opts := []recipes.SessionOption{recipes.WithDialer(c.paused(p.dialer(c, refused)))}
	if p.tls != nil {
		opts = append(opts, recipes.WithTLS(nil))
	}
	return opts
}

// paused routes dial's connections through c's Pauser, if it has one.
func (c *client) paused(dial zk.Dialer) zk.Dialer {
	if c.pause == nil {
		return dial
	}
	return c.pause.Dial(dial)
}

// open opens a session for c, waiting at most connectTimeout.
func (p *sessionParams) open(ctx context.Context, c *client) (*recipes.Session, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ctx, cancelT := context.WithTimeout(ctx, p.connectTimeout)
	defer cancelT()
	opts := slices.Clone(p.opts)
	opts = append(opts,
		recipes.WithSessionTimeout(p.timeout),
		recipes.WithBufferSizes(p.sendBuf, p.recvBuf),
	)
	opts = append(opts, p.dialOptions(c, func() { cancel(errEarlyClose) })...)
	if p.lister != nil {
		opts = append(opts, recipes.WithLister(p.lister))
	}
	s, err := recipes.NewSession(ctx, p.servers, opts...)
	if err != nil {
		if cause := context.Cause(ctx); errors.Is(cause, errEarlyClose) {
			return nil, cause
		}
		return nil, err
	}
	return s, nil
}

// rampUp opens a session for every client, client i at start+at(i), at
// most DefaultConnectsInFlight at once. Each opened client is handed to
// ready (from the goroutine that opened it). It returns when all are open,
// or with the first failure (the clients opened so far stay open), or
// with ctx's error.
func (p *sessionParams) rampUp(ctx context.Context, clients []*client, start time.Time, at func(int) time.Duration, ready func(*client)) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, DefaultConnectsInFlight)
	var wg sync.WaitGroup
	var opened atomic.Int64
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
loop:
	for i, c := range clients {
		if wait := time.Until(start.Add(at(i))); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				break loop
			}
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			break loop
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			began := time.Now()
			s, err := p.open(ctx, c)
			if err != nil {
				if ctx.Err() == nil {
					cancel(p.explainOpenErr(ctx, err, c.idx, opened.Load(), len(clients)))
				}
				return
			}
			if c.shard != nil {
				c.shard.Record(metrics.Connect, time.Since(began))
			}
			c.sess.Store(s)
			opened.Add(1)
			ready(c)
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && ctx.Err() != nil {
		return err
	}
	return nil
}

// explainOpenErr turns a failed session open into the message a user
// needs. A server that closes new connections before answering their
// handshake, while it answers the run's own session, may limit
// connections per client address (maxClientCnxns) or may be overloaded
// or out of its quorum (docs/SCALE.md: three members on a starved
// machine did that with maxClientCnxns=0): the message says what the
// server's conf tells (p.maxCnxns) and names a cause only when it knows.
func (p *sessionParams) explainOpenErr(ctx context.Context, err error, idx int, opened int64, total int) error {
	servers := strings.Join(p.servers, ",")
	if errors.Is(err, errEarlyClose) && (p.serverUp == nil || !p.serverUp()) {
		return fmt.Errorf("%w: session %d of %d (after %d opened): %s closed new connections right after they were opened and does not answer the run's own session either: is it starting, overloaded or down?",
			ErrSessions, idx+1, total, opened, servers)
	}
	if !errors.Is(err, errEarlyClose) {
		return fmt.Errorf("%w: session %d of %d (after %d opened): %w", ErrSessions, idx+1, total, opened, err)
	}
	from := "one client address"
	if p.sourceAddrs > 1 {
		from = fmt.Sprintf("%d loopback addresses (127.0.0.1-127.0.0.%d)", p.sourceAddrs, p.sourceAddrs)
	}
	fix := "raise maxClientCnxns (0 means no limit)"
	switch {
	case loopbackServers(p.servers):
		fix += exit.Advice(p.name, " or spread the clients over more loopback addresses with {source-addrs}")
	default:
		fix += " (zkherd spreads connections over 127.0.0.x source addresses only when the server is on loopback)"
	}
	what := fmt.Sprintf("%s accepted %d of %d sessions, then closed new connections right after they were opened, before answering their handshake, while it still answers the run's own session", servers, opened, total)
	limit, lerr := "", errors.New("not asked")
	if p.maxCnxns != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		limit, lerr = p.maxCnxns(cctx)
		cancel()
	}
	switch {
	case lerr == nil && limit == "0":
		return fmt.Errorf("%w: %s; its conf says maxClientCnxns=0 (no limit per client address), so not that: the server closed them for another reason (overloaded, or out of its quorum as an ensemble member; its log says which)",
			ErrRefused, what)
	case lerr == nil:
		return fmt.Errorf("%w: %s: it limits connections per client address (its conf says maxClientCnxns=%s) and these come from %s; %s, or run fewer %s",
			ErrRefused, what, inert.String(limit), from, fix, exit.Advice(p.name, "{clients}"))
	}
	return fmt.Errorf("%w: %s. One possible cause is a limit of connections per client address (maxClientCnxns in zoo.cfg, default 60; these come from %s; its conf could not be read to tell: %s), another a server overloaded or out of its quorum (its log says which). If it is the limit: %s, or run fewer %s",
		ErrRefused, what, from, inert.String(lerr.Error()), fix, exit.Advice(p.name, "{clients}"))
}
