package ensemble

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
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
	// configured unlike the default (see enstest.ServerConfigs).
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
	// serverConfig is what zoo.cfg takes of the ServerConfig.
	serverConfig ServerConfig
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
