package ensemble

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Defaults for Options.
const (
	DefaultNodes        = 1
	DefaultHeapMB       = 128
	DefaultStartTimeout = 90 * time.Second
)

// startAttempts is how often Start tries fresh ports when another process
// took one of the free ports it picked before the JVM could bind it.
const startAttempts = 3

var (
	// ErrUnknownMember means a member ID outside 1..Nodes.
	ErrUnknownMember = errors.New("ensemble: no such member")
	// ErrMemberState means the member is not in the state the operation needs,
	// such as Resume of a member that is not paused.
	ErrMemberState = errors.New("ensemble: member in wrong state")
	// ErrNoLeader means no running member reports Mode leader or standalone.
	ErrNoLeader = errors.New("ensemble: no leader")
	// ErrStopped means the ensemble was stopped.
	ErrStopped = errors.New("ensemble: stopped")

	// ErrPortInUse means a member could not bind one of its ports, because
	// another process holds it. Start retries with other ports; Restart,
	// which must reuse the member's ports, returns it.
	ErrPortInUse = errors.New("ensemble: port already in use")
)

// Options configure Start. The zero value starts one server with fsync on.
type Options struct {
	// Nodes is 1 (a standalone server) or 3, 5 or 7 (a replicated
	// ensemble). Defaults to DefaultNodes.
	Nodes int
	// NoFsync turns off fsync of the transaction log (forceSync=no): much
	// faster on slow disks, fine for throwaway data.
	NoFsync bool
	// Dir holds one directory per member (member1, ...). Defaults to a new
	// temporary directory that Stop removes; a given Dir is left in place.
	Dir string
	// HeapMB is each JVM's maximum heap. Defaults to DefaultHeapMB.
	HeapMB int
	// QuickStart compiles with the JVM's fast C1 compiler only: a server
	// starts on about half the CPU time but serves more slowly once warm.
	// Good for short-lived test servers on a busy machine; not for
	// measuring latency.
	QuickStart bool
	// StartTimeout bounds Start and Restart on top of their ctx.
	// Defaults to DefaultStartTimeout.
	StartTimeout time.Duration
	// ClientPort fixes the client port of member 1; member i listens on
	// ClientPort+i-1. 0 picks free ports. A fixed port that is taken fails
	// with ErrPortInUse at once (no retry on other ports).
	ClientPort int
	// TLS makes the members accept clients only over TLS (Netty and
	// secureClientPort; no plain client port), with a CA, server and client
	// certificates that Start makes in the ensemble's directory (see
	// Ensemble.TLS). The AdminServer then answers over HTTPS only.
	TLS bool
	// Server configuration variants, to test clients against servers
	// configured unlike the default (see ServerConfigs).
	ServerConfig
	// Installation to run. Defaults to the result of Find.
	Installation *Installation
	// PeerAddr, if set, gives the quorum address member from uses to reach
	// member to, whose quorum port is addr ("127.0.0.1:port"): a fault
	// injector puts a proxy there (package faults' Quorum). It must return
	// a loopback "127.0.0.1:port". It is called for every pair of members
	// of a replicated ensemble once their ports are chosen (again when
	// Start retries on other ports); nil, or addr returned, means directly.
	// Only the quorum link goes through it: leader election does not.
	PeerAddr func(from, to int, addr string) (string, error)
	// Logf receives progress messages. It is only called from the goroutine
	// that called an Ensemble method, so testing.T.Logf is safe. Defaults to
	// discarding them.
	Logf func(format string, args ...any)
}

// State is what a member's process is doing.
type State int

// Member states.
const (
	Stopped State = iota // no process: killed, stopped, or exited by itself
	Running
	Paused // SIGSTOPped: holds its sockets open but answers nothing
)

func (s State) String() string {
	switch s {
	case Stopped:
		return "stopped"
	case Running:
		return "running"
	case Paused:
		return "paused"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// Member describes one server of the ensemble.
type Member struct {
	ID           int    // myid, 1-based
	ClientAddr   string // 127.0.0.1:port
	AdminURL     string // http://127.0.0.1:port/commands; append /<command>. Empty when the AdminServer is off
	PeerAddr     string // quorum port; empty for a standalone server
	ElectionAddr string // leader election port; empty for a standalone server
	PID          int    // 0 when not running
	State        State
	Dir          string // the member's directory
	DataDir      string // snapshots, transaction logs, myid
	ConfigFile   string // zoo.cfg
	LogFile      string // the JVM's stdout and stderr, appended to on every Restart
}

// Ensemble is a running set of local ZooKeeper servers. Its methods are safe
// for concurrent use; operations on members are serialized.
type Ensemble struct {
	inst    Installation
	heapMB  int
	quick   bool
	timeout time.Duration
	root    string
	ownRoot bool // root was created by Start; Stop removes it
	// clientPort is member 1's fixed client port, 0 for free ports.
	clientPort int
	// props are the -D system properties of the ServerConfig.
	props []string
	// maxSessionMs is zoo.cfg's maxSessionTimeout (ServerConfig).
	maxSessionMs int64
	logf         func(format string, args ...any)
	http         *http.Client
	peerAddr     func(from, to int, addr string) (string, error)
	// tlsFiles and tlsClient are set for a TLS ensemble: the files its
	// members use and the configuration its own srvr and AdminServer
	// checks connect with.
	tlsFiles  *TLSFiles
	tlsClient *tls.Config

	mu      sync.Mutex
	members []*member
	stopped bool
}

// member is the mutable record behind Member.
type member struct {
	id                                     int
	ports                                  ports
	adminURL                               string
	dir, confDir, dataDir, configFile, log string
	proc                                   *process // nil when not running
	paused                                 bool
}

func (m *member) state() State {
	switch {
	case m.proc == nil || m.proc.exited():
		return Stopped
	case m.paused:
		return Paused
	default:
		return Running
	}
}

// Start launches an ensemble and returns once every member serves clients
// and, for several members, exactly one of them leads. On failure nothing is left
// running and the error includes the end of the failing member's log.
func Start(ctx context.Context, opts Options) (*Ensemble, error) {
	nodes := cmp.Or(opts.Nodes, DefaultNodes)
	if !ValidNodes(nodes) {
		return nil, fmt.Errorf("ensemble: Nodes is %d, want 1, 3, 5 or 7", nodes)
	}
	var inst Installation
	if opts.Installation != nil {
		inst = *opts.Installation
	} else {
		var err error
		if inst, err = Find(); err != nil {
			return nil, err
		}
	}
	e := &Ensemble{
		inst:         inst,
		heapMB:       cmp.Or(opts.HeapMB, DefaultHeapMB),
		quick:        opts.QuickStart,
		timeout:      cmp.Or(opts.StartTimeout, DefaultStartTimeout),
		root:         opts.Dir,
		props:        opts.ServerConfig.properties(),
		maxSessionMs: opts.ServerConfig.maxSessionMs(),
		logf:         opts.Logf,
		peerAddr:     opts.PeerAddr,
		http:         &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 2 * time.Second},
	}
	if e.logf == nil {
		e.logf = func(string, ...any) {}
	}
	if e.root == "" {
		dir, err := os.MkdirTemp("", tempPrefix)
		if err != nil {
			return nil, fmt.Errorf("ensemble: %w", err)
		}
		e.root, e.ownRoot = dir, true
		if err := writeOwner(dir); err != nil {
			e.removeRoot()
			return nil, fmt.Errorf("ensemble: %w", err)
		}
	}
	if opts.TLS {
		files, cfg, err := makeTLSFiles(filepath.Join(e.root, "tls"))
		if err != nil {
			e.removeRoot()
			return nil, err
		}
		e.tlsFiles, e.tlsClient = &files, cfg
		e.http.Transport = &http.Transport{DisableKeepAlives: true, TLSClientConfig: cfg}
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()

	if opts.ClientPort != 0 {
		if err := checkClientPorts(opts.ClientPort, nodes); err != nil {
			e.removeRoot()
			return nil, err
		}
	}
	e.clientPort = opts.ClientPort
	for attempt := 1; ; attempt++ {
		err := e.startAll(ctx, nodes, opts.NoFsync)
		if err == nil {
			return e, nil
		}
		e.killAll()
		if !errors.Is(err, ErrPortInUse) || attempt == startAttempts || e.clientPort != 0 {
			e.removeRoot()
			return nil, err
		}
		e.logf("ensemble: %v; retrying with other ports", err)
	}
}

// ValidNodes reports whether Start can run an ensemble of n members: 1, or
// an odd number up to 7 (an even size tolerates no more failures than the
// odd size below it).
func ValidNodes(n int) bool { return n == 1 || n == 3 || n == 5 || n == 7 }

// checkClientPorts fails early, with the fix, when a fixed client port is
// taken or out of range.
func checkClientPorts(first, nodes int) error {
	if first < 1 || first+nodes-1 > 65535 {
		return fmt.Errorf("ensemble: client port %d: choose a port from 1 to %d", first, 65536-nodes)
	}
	for i := range nodes {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(first+i))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("%w: %s (another ZooKeeper or program listens there; stop it, pick another port, or leave the port out to use free ones)", ErrPortInUse, addr)
		}
		l.Close()
	}
	return nil
}

// startAll writes the members' files on fresh ports, starts every JVM and
// waits for the ensemble to serve.
func (e *Ensemble) startAll(ctx context.Context, nodes int, noFsync bool) error {
	perMember := 2
	if nodes > 1 {
		perMember = 4
	}
	free, err := freePorts(nodes * perMember)
	if err != nil {
		return err
	}
	all := make([]ports, nodes)
	for i := range all {
		p := free[i*perMember:]
		all[i] = ports{client: p[0], admin: p[1]}
		if e.clientPort != 0 {
			all[i].client = e.clientPort + i
		}
		if nodes > 1 {
			all[i].peer, all[i].election = p[2], p[3]
		}
	}
	var peers []ports
	if nodes > 1 {
		peers = all
	}

	e.mu.Lock()
	e.members = make([]*member, nodes)
	for i := range nodes {
		dir := filepath.Join(e.root, "member"+strconv.Itoa(i+1))
		m := &member{
			id:         i + 1,
			ports:      all[i],
			dir:        dir,
			confDir:    filepath.Join(dir, "conf"),
			dataDir:    filepath.Join(dir, "data"),
			configFile: filepath.Join(dir, "conf", "zoo.cfg"),
			log:        filepath.Join(dir, "zookeeper.log"),
		}
		if e.inst.AdminServer {
			scheme := "http"
			if e.tlsFiles != nil {
				scheme = "https"
			}
			m.adminURL = fmt.Sprintf("%s://127.0.0.1:%d/commands", scheme, m.ports.admin)
		}
		e.members[i] = m
	}
	members := e.members
	for _, m := range members {
		seen, err := e.peersSeenBy(m.id, peers)
		if err != nil {
			e.mu.Unlock()
			return err
		}
		cfg := zooCfg(m.id, m.dataDir, m.ports, seen, noFsync, e.inst.AdminServer, e.tlsFiles, e.maxSessionMs)
		if err := writeMemberFiles(m, cfg, nodes > 1); err != nil {
			e.mu.Unlock()
			return err
		}
		if err := e.spawn(m); err != nil {
			e.mu.Unlock()
			return err
		}
	}
	e.mu.Unlock()

	for _, m := range members {
		if _, err := e.waitServing(ctx, m, m.proc); err != nil {
			return err
		}
	}
	if nodes > 1 {
		if _, err := e.WaitLeader(ctx); err != nil {
			return fmt.Errorf("ensemble: no leader elected: %w", err)
		}
	}
	for _, m := range members {
		if err := e.checkAdmin(ctx, m, m.proc); err != nil {
			return err
		}
		e.logf("ensemble: member %d serving on %s (pid %d, log %s)", m.id, m.ports.clientAddr(), m.proc.pid, m.log)
	}
	return nil
}

// peersSeenBy returns the members' ports as member id's configuration
// names them: the other members' quorum ports through PeerAddr.
func (e *Ensemble) peersSeenBy(id int, peers []ports) ([]ports, error) {
	if e.peerAddr == nil || peers == nil {
		return peers, nil
	}
	seen := slices.Clone(peers)
	for i := range seen {
		if i+1 == id {
			continue
		}
		addr := "127.0.0.1:" + strconv.Itoa(peers[i].peer)
		via, err := e.peerAddr(id, i+1, addr)
		if err != nil {
			return nil, fmt.Errorf("ensemble: quorum address of member %d for member %d: %w", i+1, id, err)
		}
		host, port, err := net.SplitHostPort(via)
		n, perr := strconv.Atoi(port)
		if err != nil || perr != nil || host != "127.0.0.1" {
			return nil, fmt.Errorf("ensemble: quorum address %q of member %d for member %d: want 127.0.0.1:port", via, i+1, id)
		}
		seen[i].peer = n
	}
	return seen, nil
}

func (p ports) clientAddr() string { return "127.0.0.1:" + strconv.Itoa(p.client) }

func (p ports) String() string {
	s := fmt.Sprintf("(client %d, admin %d", p.client, p.admin)
	if p.peer != 0 {
		s += fmt.Sprintf(", peer %d, election %d", p.peer, p.election)
	}
	return s + ")"
}

// spawn starts m's JVM. The caller holds e.mu.
func (e *Ensemble) spawn(m *member) error {
	classPath := strings.Join(append([]string{m.confDir}, e.inst.ClassPath...), string(os.PathListSeparator))
	args := []string{
		"-Xmx" + strconv.Itoa(e.heapMB) + "m",
		"-XX:+UseSerialGC", // a small heap needs no parallel collector threads
		"-XX:-UsePerfData", // no /tmp/hsperfdata_<user>/<pid> file left behind by a SIGKILL
		"-Djava.awt.headless=true",
		"-Dzookeeper.log.dir=" + m.dir,
		"-Dzookeeper.root.logger=INFO,CONSOLE",
		"-Dzookeeper.console.threshold=INFO",
		"-Dzookeeper.jmx.log4j.disable=true",
		"-Dorg.slf4j.simpleLogger.showDateTime=true",
		"-Dorg.slf4j.simpleLogger.dateTimeFormat=yyyy-MM-dd'T'HH:mm:ss.SSS",
	}
	if e.quick {
		args = append(args, "-XX:TieredStopAtLevel=1", "-XX:CICompilerCount=1")
	}
	args = append(args, e.props...)
	args = append(args, "-cp", classPath, "org.apache.zookeeper.server.quorum.QuorumPeerMain", m.configFile)
	cmd := exec.Command(e.inst.Java, args...)
	cmd.Dir = m.dir
	p, err := startProcess(cmd, m.log)
	if err != nil {
		return err
	}
	m.proc, m.paused = p, false
	return nil
}

// waitServing polls srvr until the member reports a Mode. It fails early when
// the JVM exits or its log shows a port bind failure.
func (e *Ensemble) waitServing(ctx context.Context, m *member, p *process) (string, error) {
	addr := m.ports.clientAddr()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var lastLogCheck time.Time
	for {
		if p.exited() {
			if p.logContains("Address already in use") {
				return "", e.startError(m, p, ErrPortInUse)
			}
			return "", e.startError(m, p, fmt.Errorf("exited: %v", p.err))
		}
		md, err := mode(ctx, addr, e.tlsClient)
		if err == nil {
			return md, nil
		}
		// A replicated server that cannot bind its quorum port keeps running.
		if time.Since(lastLogCheck) > 500*time.Millisecond {
			if p.logContains("Address already in use") {
				return "", e.startError(m, p, ErrPortInUse)
			}
			lastLogCheck = time.Now()
		}
		select {
		case <-p.done:
		case <-ctx.Done():
			return "", e.startError(m, p, fmt.Errorf("not serving: %w (last: %v)", ctx.Err(), err))
		case <-tick.C:
		}
	}
}

// startError describes why member m did not come up: the cause, then the
// end of the member's log.
func (e *Ensemble) startError(m *member, p *process, err error) error {
	return &StartError{Member: m.id, Ports: m.ports.String(), Err: err, Log: m.log, Tail: p.logTail(30)}
}

// StartError is a member that did not come up: why (Err), and where its
// log is with its last lines, so that a command can show the cause in
// one line (Cause) and leave the log in its file.
type StartError struct {
	Member int
	Ports  string // the member's ports, named when one was in use
	Err    error
	Log    string // the member's log file
	Tail   string // its last lines
}

// Cause is the first line of the error: the member and why.
func (e *StartError) Cause() string {
	if errors.Is(e.Err, ErrPortInUse) {
		return fmt.Sprintf("%v: member %d cannot bind one of its ports %s", e.Err, e.Member, e.Ports)
	}
	return fmt.Sprintf("ensemble: member %d: %v", e.Member, e.Err)
}

func (e *StartError) Error() string {
	return fmt.Sprintf("%s\n--- last lines of %s:\n%s", e.Cause(), e.Log, e.Tail)
}

// Unwrap returns why the member did not come up.
func (e *StartError) Unwrap() error { return e.Err }

// checkAdmin waits until the AdminServer answers. It starts before the
// client port, so it normally already does. When it failed to start (Jetty
// could not load, or, in a replicated ensemble, its port was taken by then)
// the member keeps running and only its AdminURL is cleared.
func (e *Ensemble) checkAdmin(ctx context.Context, m *member, p *process) error {
	if m.adminURL == "" {
		return nil
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		err := e.adminRuok(ctx, m.adminURL)
		if err == nil {
			return nil
		}
		if p.logContains("Address already in use") {
			return e.startError(m, p, ErrPortInUse)
		}
		failed := p.logContains("Unable to load jetty") || p.logContains("Problem starting AdminServer")
		if !failed {
			select {
			case <-tick.C:
				continue
			case <-ctx.Done():
			}
		}
		e.logf("ensemble: member %d: AdminServer does not answer (%v); see %s", m.id, err, m.log)
		e.mu.Lock()
		m.adminURL = ""
		e.mu.Unlock()
		return nil
	}
}

func (e *Ensemble) adminRuok(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/ruok", nil)
	if err != nil {
		return err
	}
	resp, err := e.http.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	return nil
}

// ConnectString lists every member's client address, comma-separated, for zk.Connect
// (after strings.Split) or any ZooKeeper client.
func (e *Ensemble) ConnectString() string { return strings.Join(e.Servers(), ",") }

// Servers returns every member's client address, "127.0.0.1:port", by ID.
func (e *Ensemble) Servers() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := make([]string, len(e.members))
	for i, m := range e.members {
		s[i] = m.ports.clientAddr()
	}
	return s
}

// TLS returns the certificate files of an ensemble started with
// Options.TLS, nil otherwise.
func (e *Ensemble) TLS() *TLSFiles { return e.tlsFiles }

// TLSConfig returns a client configuration that connects to an ensemble
// started with Options.TLS (trusting its CA, presenting its client
// certificate), nil otherwise. Callers must not modify it.
func (e *Ensemble) TLSConfig() *tls.Config { return e.tlsClient }

// Dir returns the directory holding the members' directories.
func (e *Ensemble) Dir() string { return e.root }

// Members returns a snapshot of every member, by ID.
func (e *Ensemble) Members() []Member {
	e.mu.Lock()
	defer e.mu.Unlock()
	ms := make([]Member, len(e.members))
	for i, m := range e.members {
		ms[i] = Member{
			ID:         m.id,
			ClientAddr: m.ports.clientAddr(),
			AdminURL:   m.adminURL,
			State:      m.state(),
			Dir:        m.dir,
			DataDir:    m.dataDir,
			ConfigFile: m.configFile,
			LogFile:    m.log,
		}
		if m.ports.peer != 0 {
			ms[i].PeerAddr = "127.0.0.1:" + strconv.Itoa(m.ports.peer)
			ms[i].ElectionAddr = "127.0.0.1:" + strconv.Itoa(m.ports.election)
		}
		if ms[i].State != Stopped {
			ms[i].PID = m.proc.pid
		}
	}
	return ms
}

// Mode asks member id for its srvr Mode: "leader", "follower" or
// "standalone". It fails while the member is not serving, for example while
// it is paused or electing a leader.
func (e *Ensemble) Mode(ctx context.Context, id int) (string, error) {
	e.mu.Lock()
	m, err := e.member(id)
	e.mu.Unlock()
	if err != nil {
		return "", err
	}
	return mode(ctx, m.ports.clientAddr(), e.tlsClient)
}

// Leader returns the ID of the member that reports Mode leader (or
// standalone) right now, asking only running members, since a paused one
// cannot answer. It does not wait for an election: see WaitLeader.
func (e *Ensemble) Leader(ctx context.Context) (int, error) {
	e.mu.Lock()
	if e.stopped {
		e.mu.Unlock()
		return 0, ErrStopped
	}
	var running []*member
	for _, m := range e.members {
		if m.state() == Running {
			running = append(running, m)
		}
	}
	e.mu.Unlock()

	var leaders []int
	for _, m := range running {
		md, err := mode(ctx, m.ports.clientAddr(), e.tlsClient)
		if err == nil && (md == "leader" || md == "standalone") {
			leaders = append(leaders, m.id)
		}
	}
	switch len(leaders) {
	case 0:
		return 0, ErrNoLeader
	case 1:
		return leaders[0], nil
	}
	return 0, fmt.Errorf("ensemble: members %v all claim to lead", leaders)
}

// WaitLeader polls Leader until exactly one running member leads, or ctx
// ends (AwaitLeader).
func (e *Ensemble) WaitLeader(ctx context.Context) (int, error) { return AwaitLeader(ctx, e, 0) }

// AwaitLeader polls l's Leader every 50ms, each poll bounded by
// srvrTimeout, until a member other than not leads (not 0: any member), or
// ctx ends. It is the one leader wait: the faults package measures an
// election with it. A stopped ensemble ends it with ErrStopped.
func AwaitLeader(ctx context.Context, l interface {
	Leader(context.Context) (int, error)
}, not int) (int, error) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		qctx, cancel := context.WithTimeout(ctx, srvrTimeout)
		id, err := l.Leader(qctx)
		cancel()
		switch {
		case err == nil && id != not:
			return id, nil
		case errors.Is(err, ErrStopped):
			return 0, err
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			if err == nil {
				err = fmt.Errorf("member %d still leads", id)
			}
			return 0, fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		}
	}
}

// member returns member id. The caller holds e.mu.
func (e *Ensemble) member(id int) (*member, error) {
	if e.stopped {
		return nil, ErrStopped
	}
	if id < 1 || id > len(e.members) {
		return nil, fmt.Errorf("%w: %d (have 1..%d)", ErrUnknownMember, id, len(e.members))
	}
	return e.members[id-1], nil
}

// withMember runs f on member id if its state is one of want.
func (e *Ensemble) withMember(id int, op string, f func(m *member) error, want ...State) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	m, err := e.member(id)
	if err != nil {
		return err
	}
	st := m.state()
	for _, w := range want {
		if st == w {
			return f(m)
		}
	}
	return fmt.Errorf("%w: cannot %s member %d: it is %v", ErrMemberState, op, id, st)
}

// Kill sends SIGKILL to member id, as a crash or power loss would, and waits
// until the process is gone. Clients see their connections reset at once.
func (e *Ensemble) Kill(id int) error {
	return e.withMember(id, "kill", func(m *member) error {
		if err := m.proc.kill(); err != nil {
			return err
		}
		m.proc, m.paused = nil, false
		e.logf("ensemble: killed member %d", id)
		return nil
	}, Running, Paused)
}

// StopMember stops member id gracefully with SIGTERM (resuming it first if
// paused), and kills it if it has not exited within 15 s.
func (e *Ensemble) StopMember(id int) error {
	return e.withMember(id, "stop", func(m *member) error {
		p := m.proc
		if err := p.signal(syscall.SIGTERM); err != nil {
			return err
		}
		if err := p.signal(syscall.SIGCONT); err != nil {
			return err
		}
		if p.wait(exitWait) != nil {
			e.logf("ensemble: member %d ignored SIGTERM; killing it", id)
			if err := p.kill(); err != nil {
				return err
			}
		}
		m.proc, m.paused = nil, false
		e.logf("ensemble: stopped member %d", id)
		return nil
	}, Running, Paused)
}

// Pause freezes member id with SIGSTOP: its sockets stay open but it answers
// nothing, like a long GC pause or a hung machine. Peers and clients notice
// only through their timeouts.
func (e *Ensemble) Pause(id int) error {
	return e.withMember(id, "pause", func(m *member) error {
		if err := m.proc.signal(syscall.SIGSTOP); err != nil {
			return err
		}
		m.paused = true
		if !waitStopped(m.proc.pid, 2*time.Second) {
			e.logf("ensemble: member %d not seen stopped 2s after SIGSTOP", id)
		}
		e.logf("ensemble: paused member %d", id)
		return nil
	}, Running)
}

// Resume continues a paused member with SIGCONT.
func (e *Ensemble) Resume(id int) error {
	return e.withMember(id, "resume", func(m *member) error {
		if err := m.proc.signal(syscall.SIGCONT); err != nil {
			return err
		}
		m.paused = false
		e.logf("ensemble: resumed member %d", id)
		return nil
	}, Paused)
}

// Restart starts a killed or stopped member again on the same ports and data
// directory, and waits until it serves (which, in a 3-node ensemble, needs a
// quorum to be up).
func (e *Ensemble) Restart(ctx context.Context, id int) error {
	var m *member
	err := e.withMember(id, "restart", func(mm *member) error {
		m = mm
		return e.spawn(m)
	}, Stopped)
	if err != nil {
		return err
	}
	e.mu.Lock()
	p := m.proc
	e.mu.Unlock()

	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	md, err := e.waitServing(ctx, m, p)
	if err != nil {
		e.mu.Lock()
		if m.proc == p {
			p.kill()
			m.proc = nil
		}
		e.mu.Unlock()
		return err
	}
	e.logf("ensemble: restarted member %d (pid %d, %s)", id, p.pid, md)
	return nil
}

// Stop kills every member, paused ones included, waits for them to exit and
// removes the directory Start created. It is idempotent; every other method
// fails with ErrStopped afterwards.
func (e *Ensemble) Stop() error {
	e.mu.Lock()
	if e.stopped {
		e.mu.Unlock()
		return nil
	}
	e.stopped = true
	e.mu.Unlock()
	err := e.killAll()
	if rmErr := e.removeRoot(); rmErr != nil {
		err = errors.Join(err, rmErr)
	}
	e.logf("ensemble: stopped")
	return err
}

// killAll kills every running or paused member and waits for them.
// SIGKILL also ends a SIGSTOPped process, so paused members need no SIGCONT.
func (e *Ensemble) killAll() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var errs []error
	for _, m := range e.members {
		if m.proc != nil {
			errs = append(errs, m.proc.signal(syscall.SIGKILL))
		}
	}
	for _, m := range e.members {
		if m.proc == nil {
			continue
		}
		if err := m.proc.wait(exitWait); err != nil {
			errs = append(errs, err)
			continue
		}
		m.proc, m.paused = nil, false
	}
	return errors.Join(errs...)
}

func (e *Ensemble) removeRoot() error {
	if !e.ownRoot {
		return nil
	}
	if err := os.RemoveAll(e.root); err != nil {
		return fmt.Errorf("ensemble: %w", err)
	}
	return nil
}
