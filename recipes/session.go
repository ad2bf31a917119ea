package recipes

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// ConnState is what a Session knows about its link to the ensemble.
type ConnState int32

const (
	// StateConnecting: no session established yet.
	StateConnecting ConnState = iota
	// StateConnected: the session is live and a server answers.
	StateConnected
	// StateSuspended: the connection dropped; the session may still be alive
	// on the servers, so held locks are in doubt, not lost (Curator's SUSPENDED).
	StateSuspended
	// StateExpired: the servers ended the session; terminal.
	StateExpired
	// StateClosed: the owner closed the session; terminal.
	StateClosed
)

func (s ConnState) String() string {
	switch s {
	case StateConnecting:
		return "connecting"
	case StateConnected:
		return "connected"
	case StateSuspended:
		return "suspended"
	case StateExpired:
		return "expired"
	case StateClosed:
		return "closed"
	}
	return fmt.Sprintf("ConnState(%d)", int32(s))
}

// Defaults for NewSession.
const (
	DefaultSessionTimeout = 10 * time.Second
	// DefaultBufferSize matches the server's default jute.maxbuffer (1 MiB):
	// no reply a default server sends is larger. go-zookeeper's own default is
	// 1.5 MiB for each of the send and receive buffers, per session.
	DefaultBufferSize = 1 << 20
	// DefaultConnectTimeout bounds the dial to one server.
	DefaultConnectTimeout = 2 * time.Second
)

// SessionOption configures NewSession.
type SessionOption func(*sessionConfig)

type sessionConfig struct {
	timeout        time.Duration
	sendBuffer     int
	recvBuffer     int
	logger         zk.Logger
	dialer         zk.Dialer
	auth           []authCred
	observers      []func(zk.Event)
	connectTimeout time.Duration
	tls            *tls.Config
	lister         *Lister
}

type authCred struct {
	scheme string
	cred   []byte
}

// WithSessionTimeout sets the session timeout asked of the server (which may
// clamp it to its min/max). Defaults to DefaultSessionTimeout.
func WithSessionTimeout(d time.Duration) SessionOption {
	return func(c *sessionConfig) { c.timeout = d }
}

// WithBufferSizes sets go-zookeeper's send buffer (allocated once) and receive
// buffer (allocated on every reconnection, and the largest reply accepted).
// Load clients with thousands of sessions want these small: a reply must fit,
// so size recv to the largest child list the session will read. Both default
// to DefaultBufferSize.
func WithBufferSizes(send, recv int) SessionOption {
	return func(c *sessionConfig) { c.sendBuffer, c.recvBuffer = send, recv }
}

// WithLogger receives go-zookeeper's log lines. By default they are kept
// only to explain connection failures; info lines are always off.
func WithLogger(l zk.Logger) SessionOption {
	return func(c *sessionConfig) { c.logger = l }
}

// WithDialer replaces net.DialTimeout, e.g. to pick a loopback source address
// or to route through a fault-injecting proxy.
func WithDialer(d zk.Dialer) SessionOption {
	return func(c *sessionConfig) { c.dialer = d }
}

// WithDigestAuth adds "digest" credentials (user:password) to the session;
// they are resent on every reconnection.
func WithDigestAuth(userPassword string) SessionOption {
	return func(c *sessionConfig) {
		c.auth = append(c.auth, authCred{scheme: "digest", cred: []byte(userPassword)})
	}
}

// WithEventObserver is called synchronously for every event the connection
// sees (session changes and watch notifications). It must not block.
func WithEventObserver(fn func(zk.Event)) SessionOption {
	return func(c *sessionConfig) { c.observers = append(c.observers, fn) }
}

// WithConnectTimeout bounds each dial attempt. Defaults to DefaultConnectTimeout.
func WithConnectTimeout(d time.Duration) SessionOption {
	return func(c *sessionConfig) { c.connectTimeout = d }
}

// Session is one ZooKeeper session. Unlike a bare *zk.Conn, which silently
// starts a fresh session after expiry, a Session ends for good when the
// servers expire it: Done is closed and every recipe built on it reports
// its ownership lost. Safe for concurrent use.
type Session struct {
	conn    *zk.Conn
	timeout time.Duration // asked for
	seen    *wireSeen     // the negotiated timeout, when a server was last heard

	mu          sync.Mutex
	state       ConnState
	changed     chan struct{} // closed and replaced on every state change
	suspendedAt time.Time
	suspensions int64 // transitions to StateSuspended so far
	id          int64
	err         error
	lastLog     string

	done      chan struct{}
	closeOnce sync.Once
	// dialled is the connection go-zookeeper dialled last (under mu);
	// Close closes it (see closeDialled).
	dialled net.Conn

	watchEvents atomic.Int64
	// tooLarge counts replies go-zookeeper refused for exceeding the
	// receive buffer; each one also drops the connection.
	tooLarge    atomic.Int64
	tooLargeMsg atomic.Value // string: the last such log line
	observers   []func(zk.Event)
	logger      zk.Logger
	lister      *Lister // lists large directories for this session; nil: its own connection

	// The process's owner identity (see ownerACL).
	authMu            sync.Mutex
	authTried, authOK bool
	// probed once the server's ACL enforcement is known; enforced says
	// whether owner-only nodes can be trusted (see probeOwnerACL).
	probed, enforced bool
}

// NewSession connects to servers ("host:port" each; a chroot is not part of
// these) and waits until a session is established or ctx ends.
func NewSession(ctx context.Context, servers []string, opts ...SessionOption) (*Session, error) {
	cfg := sessionConfig{
		timeout:        DefaultSessionTimeout,
		sendBuffer:     DefaultBufferSize,
		recvBuffer:     DefaultBufferSize,
		connectTimeout: DefaultConnectTimeout,
	}
	for _, o := range opts {
		o(&cfg)
	}
	if len(servers) == 0 {
		return nil, errors.New("recipes: no ZooKeeper server given")
	}
	s := &Session{
		timeout:   cfg.timeout,
		seen:      newWireSeen(),
		changed:   make(chan struct{}),
		done:      make(chan struct{}),
		observers: cfg.observers,
		logger:    cfg.logger,
		lister:    cfg.lister,
	}
	dialer := cfg.dialer
	if dialer == nil {
		dialer = timeoutDialer(cfg.connectTimeout)
	}
	if cfg.tls != nil {
		dialer = tlsDialer(dialer, cfg.tls, cfg.connectTimeout)
	}
	// Java's client gives each server the same share of the session
	// timeout to answer a handshake (see handshakeDialer).
	dialer = handshakeDialer(dialer, func() time.Duration { return s.Timeout() / time.Duration(len(servers)) }, s.seen)
	dialer = s.remembering(dialer)
	// go-zookeeper's own race on lastZxid after a reconnection (see
	// replyOrderDialer).
	dialer = replyOrderDialer(dialer)
	// The event channel go-zookeeper returns is not read: every event
	// reaches onEvent through the callback, and go-zookeeper drops what the
	// channel (6 slots) cannot hold without blocking (conn.sendEvent), so
	// no goroutine per session is spent draining it.
	conn, _, err := zk.Connect(servers, cfg.timeout,
		zk.WithLogInfo(false),
		zk.WithLogger(sessionLogger{s}),
		zk.WithEventCallback(s.onEvent),
		zk.WithMaxBufferSize(cfg.recvBuffer),
		zk.WithMaxConnBufferSize(cfg.sendBuffer),
		zk.WithDialer(dialer),
	)
	if err != nil {
		return nil, fmt.Errorf("recipes: connect %s: %w", strings.Join(servers, ","), err)
	}
	s.mu.Lock()
	s.conn = conn
	s.mu.Unlock()
	for _, a := range cfg.auth {
		if err := conn.AddAuth(a.scheme, a.cred); err != nil {
			conn.Close()
			return nil, fmt.Errorf("recipes: add %s auth: %w", a.scheme, err)
		}
	}
	if err := s.WaitConnected(ctx); err != nil {
		s.Close()
		return nil, s.explainConnectErr(servers, err)
	}
	// The first StateHasSession event can arrive before s.conn is set
	// above (go-zookeeper connects in the background), leaving the id
	// unread; every ownership check (an ephemeral's owner against ID)
	// would then fail for this session.
	s.mu.Lock()
	if s.id == 0 {
		s.id = conn.SessionID()
	}
	s.mu.Unlock()
	return s, nil
}

func (s *Session) explainConnectErr(servers []string, err error) error {
	s.mu.Lock()
	last := s.lastLog
	s.mu.Unlock()
	return &NoSessionError{Servers: servers, Err: err, LastAttempt: last}
}

func (s *Session) onEvent(ev zk.Event) {
	if ev.Type != zk.EventSession {
		if ev.Type != zk.EventNotWatching {
			s.watchEvents.Add(1)
		}
	} else {
		s.onSessionEvent(ev)
	}
	for _, fn := range s.observers {
		fn(ev)
	}
}

func (s *Session) onSessionEvent(ev zk.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == StateExpired || s.state == StateClosed {
		return
	}
	next := s.state
	switch ev.State {
	case zk.StateHasSession:
		next = StateConnected
		if s.conn != nil {
			s.id = s.conn.SessionID()
		}
	case zk.StateDisconnected, zk.StateConnecting:
		if s.state == StateConnected {
			next = StateSuspended
			// Down since the server last renewed the session, not
			// since go-zookeeper noticed (up to two thirds of the
			// session timeout later): the server counts the session's
			// timeout from the last packet it got (see wireSeen.heard).
			s.suspendedAt = s.seen.touchedAt()
			s.suspensions++
		}
	case zk.StateExpired:
		next = StateExpired
		s.err = ErrSessionExpired
	case zk.StateAuthFailed:
		next = StateExpired
		s.err = errAuthFailed
	}
	if next == s.state {
		return
	}
	s.state = next
	close(s.changed)
	s.changed = make(chan struct{})
	if next == StateExpired {
		close(s.done)
		// Stop go-zookeeper from opening a fresh session under us. Close
		// waits for the server, which the callback's goroutine must not do.
		go s.conn.Close()
	}
}

func timeoutDialer(d time.Duration) zk.Dialer {
	return func(network, address string, _ time.Duration) (net.Conn, error) {
		return net.DialTimeout(network, address, d)
	}
}

// sessionLogger keeps the last line for error messages and forwards to the
// user's logger, if any.
type sessionLogger struct{ s *Session }

func (l sessionLogger) Printf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	if strings.Contains(line, "exceeds max buffer size") {
		l.s.tooLargeMsg.Store(line)
		l.s.tooLarge.Add(1)
	}
	l.s.mu.Lock()
	l.s.lastLog = line
	l.s.mu.Unlock()
	if l.s.logger != nil {
		l.s.logger.Printf("%s", line)
	}
}

// RepliesTooLarge says how many replies go-zookeeper refused for exceeding
// the session's receive buffer (each one dropped the connection and
// failed its request with zk.ErrConnectionClosed), and go-zookeeper's
// last line about one, so that a caller of Conn can tell that failure
// from a lost server.
func (s *Session) RepliesTooLarge() (n int64, last string) {
	last, _ = s.tooLargeMsg.Load().(string)
	return s.tooLarge.Load(), last
}

// Conn is the underlying go-zookeeper connection, for operations no recipe
// covers. Do not Close it; close the Session.
func (s *Session) Conn() *zk.Conn { return s.conn }

// ID is the server-assigned session id (0 before the first connection).
func (s *Session) ID() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// Timeout is the session timeout the server granted (the ConnectResponse's):
// the server may clamp the one asked for to its minSessionTimeout and
// maxSessionTimeout, and expires the session on this one. Every bound
// derived from the session timeout uses it. Before the first
// ConnectResponse it is the asked one.
func (s *Session) Timeout() time.Duration {
	if d := time.Duration(s.seen.negotiated.Load()); d > 0 {
		return d
	}
	return s.timeout
}

// AskedTimeout is the session timeout asked of the server
// (WithSessionTimeout).
func (s *Session) AskedTimeout() time.Duration { return s.timeout }

// State is the current connection state.
func (s *Session) State() ConnState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// Changed returns a channel closed at the next state change, and the state
// it was issued in, so that callers can wait for transitions without polling.
func (s *Session) Changed() (<-chan struct{}, ConnState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed, s.state
}

// SuspendedFor is how long the connection has been down (0 when connected),
// counted from when the server last renewed the session (at the latest; see
// wireSeen.heard), where the server's clock for the session's timeout
// starts, not from when go-zookeeper noticed the drop.
func (s *Session) SuspendedFor() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != StateSuspended {
		return 0
	}
	return time.Since(s.suspendedAt)
}

// silentFor is how long since the server last renewed the session, at the
// latest (see wireSeen.heard).
func (s *Session) silentFor() time.Duration { return time.Since(s.seen.touchedAt()) }

// inDoubt reports whether the session may have expired unknown to this
// process: the connection is down, or the server has not been heard for
// as long as a grant's monitor allows (silenceLimit). A process that was
// paused is in doubt on resuming until the server answers a request.
func (s *Session) inDoubt() bool {
	return s.State() != StateConnected || s.silentFor() >= silenceLimit(s.Timeout())
}

// confirmAlive sends one request on the session and waits for its answer,
// across reconnections, for up to the session timeout or until ctx ends:
// nil when a server answered (and so renewed the session), the session's
// end (ErrSessionExpired, ErrSessionClosed), or why it could not tell.
func (s *Session) confirmAlive(ctx context.Context) error {
	bounded, cancel := context.WithTimeout(ctx, s.Timeout())
	defer cancel()
	return retryConn(bounded, s, func() error {
		_, _, err := s.Conn().Exists("/")
		return err
	})
}

// Suspensions counts the connection drops so far (transitions to
// StateSuspended), so that a watcher woken after a quick drop and
// reconnection can tell that the connection was down in between.
func (s *Session) Suspensions() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.suspensions
}

// Done is closed when the session ends: expired by the servers or closed.
func (s *Session) Done() <-chan struct{} { return s.done }

// Err says why Done is closed: ErrSessionExpired or ErrSessionClosed; nil
// while the session lives.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// WatchEvents counts watch notifications delivered to this session: the
// client side of the herd effect.
func (s *Session) WatchEvents() int64 { return s.watchEvents.Load() }

// WaitConnected blocks until the session is connected, it ends, or ctx ends.
func (s *Session) WaitConnected(ctx context.Context) error {
	for {
		ch, st := s.Changed()
		switch st {
		case StateConnected:
			return nil
		case StateExpired, StateClosed:
			return s.Err()
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Close ends the session at once; its ephemeral nodes are removed by the
// server. Idempotent.
func (s *Session) Close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		terminal := s.state == StateExpired
		if !terminal {
			s.state = StateClosed
			s.err = ErrSessionClosed
			close(s.changed)
			s.changed = make(chan struct{})
			close(s.done)
		}
		s.mu.Unlock()
		s.conn.Close()
		s.closeDialled()
	})
}

// remembering wraps dial so that the session knows its connection: once
// the session is closed or expired, a connection dialled after it is
// closed at once. (After an expiry go-zookeeper would open a fresh
// session, and until the Session's Close stops it, that one would serve
// requests meant for the old: a read there finds the old session's nodes
// gone, which a recipe could take for its own release.)
func (s *Session) remembering(dial zk.Dialer) zk.Dialer {
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		c, err := dial(network, address, timeout)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.state == StateClosed || s.state == StateExpired {
			c.Close()
			return nil, s.err
		}
		s.dialled = c
		return c, nil
	}
}

// closeDialled closes the session's last connection after zk.Conn.Close.
// go-zookeeper's Close does not interrupt a handshake in progress: the
// handshake's read waits up to ten times the receive timeout (400 s at a
// 60 s session timeout) for a server that accepted the connection and
// never answered (one starting, or behind a partition), and its three
// goroutines and buffers stay until then (issue 13: after a server's
// restart, about 140 of 10,000 sessions closed at a run's end were left
// so). Closing the connection ends that read; go-zookeeper then sees
// that it was closed and returns. Closing it twice is harmless.
func (s *Session) closeDialled() {
	s.mu.Lock()
	c := s.dialled
	s.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// alive reports ErrSessionExpired/ErrSessionClosed once the session ended.
func (s *Session) alive() error {
	select {
	case <-s.done:
		return s.Err()
	default:
		return nil
	}
}
