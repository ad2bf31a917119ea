package ensemble

import (
	"cmp"
	"context"
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
	"time"
)

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
		serverConfig: opts.ServerConfig,
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
		cfg := zooCfg(m.id, m.dataDir, m.ports, seen, noFsync, e.inst.AdminServer, e.tlsFiles, e.serverConfig)
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
