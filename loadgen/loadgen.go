package loadgen

import (
	"crypto/tls"
	"errors"
	"time"

	"github.com/zkherd/zkherd/faults"
	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/metrics"
	"github.com/zkherd/zkherd/oracle"
	"github.com/zkherd/zkherd/recipes"
	"github.com/zkherd/zkherd/scenarios"
)

var (
	// ErrBadOptions is returned for options or a scenario that cannot run
	// (no servers, zero clients, ...).
	ErrBadOptions = errors.New("invalid run")
	// ErrRefused means the server closed connections right after they were
	// opened, before answering their handshake, while it answered the run's
	// own session: a limit of connections per client address
	// (maxClientCnxns), or a server overloaded or out of its quorum.
	ErrRefused = errors.New("server refused connections")
	// ErrServerLost means the ensemble stopped answering during the run.
	ErrServerLost = errors.New("lost the ZooKeeper server mid-run")
	// ErrSessions means client sessions could not be opened.
	ErrSessions = errors.New("could not open client sessions")
)

// Defaults for Options.
const (
	// DefaultInterval is the length of one metrics interval and the period of
	// progress reports.
	DefaultInterval = time.Second
	// DefaultConnectsInFlight bounds the sessions being opened at once
	// during ramp-up, whatever the ramp-up rate.
	DefaultConnectsInFlight = 128
	// ConnsPerSourceAddr is how many connections share one loopback source
	// address when spreading is automatic: below ZooKeeper's default
	// maxClientCnxns of 60.
	ConnsPerSourceAddr = 50
	// Root is the parent of every run's namespace.
	Root = "/zkherd/runs"
)

// Options say how a run reaches ZooKeeper and reports its progress; the
// scenario (a scenarios.Run) says what the run does.
type Options struct {
	// Servers are the ensemble's client addresses, "host:port"; required.
	Servers []string
	// Chroot, if set, is prepended to the run's namespace (the connect
	// string's chroot).
	Chroot string
	// SessionOptions are applied to every session (digest auth, a
	// logger...). The scenario's session timeout and loadgen's buffer sizes
	// and dialer are applied after them.
	SessionOptions []recipes.SessionOption
	// TLS, when set, reaches the servers over TLS (a secureClientPort):
	// every session (recipes.WithTLS) and the mntr reads.
	TLS *tls.Config
	// Members are the addresses whose mntr counters are read before and
	// after the run, for server packets and watch fan-out. Defaults to
	// Servers.
	Members []string
	// SourceAddrs is how many loopback source addresses (127.0.0.1,
	// 127.0.0.2, ...) client connections are spread over when the servers
	// are on loopback. 0 picks one address per ConnsPerSourceAddr clients;
	// 1 turns spreading off.
	SourceAddrs int
	// Name names a value the user gave in the advice the run writes
	// (errors, notes): the command's flag for it ("--clients"); nil
	// names it bare. Libraries never name flags (exit.Advice).
	Name func(input string) string
	// RunID names the namespace /zkherd/runs/<RunID>. Defaults to a new id
	// made of the time and random letters.
	RunID string
	// Interval is the metrics interval and progress period. Defaults to
	// DefaultInterval.
	Interval time.Duration
	// Progress, if set, receives a report once per interval and a last one
	// when the run is done, from one goroutine. It must not block for long.
	Progress func(Progress)
	// ProgressPhases makes every Progress carry what a live dashboard
	// draws: the summary and histogram of every phase (Progress.Phases,
	// Buckets), the timeline and the lock's wait graph, which costs a few
	// milliseconds per interval; without it only the main phase is summed
	// up.
	ProgressPhases bool
	// OnInterval, if set, receives every phase's closed interval (the
	// values the run's HdrHistograms get, metrics.WithIntervalHook) once
	// per Interval and at the end, from one goroutine; a live metrics
	// endpoint records them. It must not block for long.
	OnInterval func(metrics.Phase, *metrics.PhaseInterval)
	// NewLocker replaces the recipe of lock scenarios (fair-lock, herd-lock,
	// herd-children) with another Locker on the same path: tests plug in a
	// deliberately broken lock to prove that the checks catch it.
	NewLocker func(s *recipes.Session, path string) recipes.Locker
	// Logf receives notices (for example how connections are spread).
	// Defaults to discarding them.
	Logf func(format string, args ...any)
	// Namespace, if set, replaces /zkherd/runs/<RunID> as the run's
	// namespace (an absolute path, below Chroot).
	Namespace string
	// SharedNamespace says that other processes run in Namespace at the
	// same time (package distrib): it is neither created exclusively nor
	// removed, the leftover check counts only this run's nodes, and
	// fencing tokens go to guarded znodes that span the processes.
	SharedNamespace bool
	// NamespaceClients, with SharedNamespace, is how many clients work in
	// the namespace over every process: the receive buffers of this run's
	// sessions must fit listings of all their nodes.
	NamespaceClients int
	// Process and Processes, with SharedNamespace, are this process's
	// number (from 0, the starter) and how many processes share the
	// namespace: queue item ids and barrier groups span the processes
	// through them, and only process 0 injects the scenario's faults (the
	// others' holders behave as under faults).
	Process, Processes int
	// Ensemble is the local ensemble started for the run, which the
	// scenario's server faults (kill-leader, kill-member, pause-member)
	// act on; nil when the run targets existing servers.
	Ensemble faults.Ensemble
	// Quorum, with Ensemble, holds the proxies on the ensemble's quorum
	// links (the ensemble was started with its PeerAddr): lag-member acts
	// through it.
	Quorum *faults.Quorum
}

// Result is what a run measured and checked.
type Result struct {
	// Run is the scenario run, every default applied.
	Run scenarios.Run
	// RunID and Namespace name where the run worked.
	RunID, Namespace string
	// Partial is set when ctx ended the run before its duration or
	// operation count.
	Partial bool
	// Unreachable is how long the servers could not be reached during the
	// window (the admin session, on the same servers as the clients, was
	// not connected), outside the scenario's own server faults. Checks.
	// NotChecked says so too: the window measured less than it claims.
	Unreachable time.Duration
	// Ramp is what the ramp-up did before the window opened (nil when the
	// window opened with the first session, or the ramp-up did not end);
	// Drain how long the clients took to stop after the window.
	Ramp  *Ramp
	Drain time.Duration
	// Start is when the first session was opened; WindowStart when
	// operations began (after ramp-up for stampede and open-loop arrivals);
	// Stop when the run stopped issuing operations.
	Start, WindowStart, Stop time.Time
	// Ops counts completed operations in the window (acquisitions, items
	// consumed, elections won, barrier rounds).
	Ops int64
	// Releases counts lock, lease and leadership releases.
	Releases int64
	// Throughput is Ops per second of the window.
	Throughput float64
	// TargetRate is the rate an open-model run was asked for, operations
	// per second, and AchievedRate the rate its scheduled operations
	// started and completed in the window (a queue's: items produced); 0
	// for closed loops.
	TargetRate, AchievedRate float64
	// Metrics holds every phase's histograms, the per-interval timeline and
	// the counters (errors by kind included).
	Metrics *metrics.Result
	// Requests counts the clients' ZooKeeper requests by kind during the
	// window (create, delete, exists, get_data, get_children, ...).
	Requests map[string]int64
	// Totals are the window's raw counts, which every figure of the run
	// is computed from (figures.All).
	Totals figures.Totals
	// MntrError says why the server counts are missing, if they are.
	MntrError string
	// Checks holds the correctness checks.
	Checks Checks
	// SourceAddrs is how many loopback source addresses connections used.
	SourceAddrs int
	// QueueDepth is the queue's depth sampled once per interval (queue
	// scenarios).
	QueueDepth []int64
	// QueueItems, in a queue run spread over processes, is this process's
	// item accounting, which the process that merges the run settles
	// (SettleQueue); LostItems and DuplicateItems are then not counted
	// here.
	QueueItems *QueueLedger
	// Notes are things the user should know about the run, one line each.
	Notes []string
	// Events are what happened during the run, in time order: check
	// violations (the first few of each kind) and, later, faults.
	Events []Event
	// Faults is what the scenario's faults did and what they cost (nil
	// without faults).
	Faults *faults.Summary
	// Fencing is what the locks' guarded resources saw (lock and election
	// runs).
	Fencing *Fencing
	// Generator is how busy this process was during the window; when it
	// fell behind, Notes says so too.
	Generator Generator
	// Lock is who waited on whom at the run's first lock at the window's
	// busiest moment (of the once-per-interval graphs, one with a release
	// and the most waiters); nil for recipes that are not locks.
	Lock *WaitGraph
	// History is every operation the clients made, and Linearizability
	// what the oracle found in it (oracle.Check).
	History         *oracle.History
	Linearizability *oracle.Result
}

// Ramp is the ramp-up's own figures: sessions opening on the scenario's
// schedule before the measured window. Closed-loop clients work as their
// sessions open: their operations then are Ops and Metrics, not the
// window's.
type Ramp struct {
	Duration time.Duration
	Sessions int
	Ops      int64
	// Metrics holds the ramp-up's latencies and counts (nil when no
	// client worked during it).
	Metrics *metrics.Result
}

// Event kinds.
const (
	EventViolation = "violation"
	EventNote      = "note"
)

// Event is something that happened at a moment of the run.
type Event struct {
	At     time.Time
	Kind   string
	Detail string
}

// Checks are the correctness checks of a run. Passed is false when any
// counter below that marks a violation is above zero. report.json writes
// it as it is, under the JSON names below.
type Checks struct {
	// MutualExclusionViolations counts grants that found another holder in
	// the critical section (for a read/write lock: a writer with anyone).
	MutualExclusionViolations int64 `json:"mutual_exclusion_violations"`
	// FencingViolations counts grants whose fencing token did not exceed
	// the previous holder's.
	FencingViolations int64 `json:"fencing_violations"`
	// FIFOBypasses counts fair-lock grants given out of node creation order;
	// MaxBypass is the most grants that overtook one waiter.
	FIFOBypasses int64 `json:"fifo_bypasses"`
	MaxBypass    int64 `json:"max_bypass"`
	// FIFOChecked says whether FIFO order was checked (fair lock only).
	FIFOChecked bool `json:"fifo_checked"`
	// SemaphoreOverIssued counts grants that made more holders than leases.
	SemaphoreOverIssued int64 `json:"semaphore_over_issued"`
	// DoubleLeaders counts times two clients were leader at once.
	DoubleLeaders int64 `json:"double_leaders"`
	// LostItems and DuplicateItems count queue items consumed never or
	// twice; Unconsumed counts items still queued when the run stopped
	// (not a failure: they were removed with the namespace, and a backlog
	// that grew through the window is a warning).
	LostItems      int64 `json:"lost_items"`
	DuplicateItems int64 `json:"duplicate_items"`
	Unconsumed     int64 `json:"unconsumed"`
	// ForeignDeletedItems counts queue items another client deleted
	// (foreign-delete): gone, but not lost by the recipe.
	ForeignDeletedItems int64 `json:"foreign_deleted_items,omitempty"`
	// ForeignGrants counts violations: grants to waiters whose node another
	// client had deleted, or raced grants whose holder never learnt it.
	ForeignGrants int64 `json:"foreign_grants,omitempty"`
	// ForeignRacedGrants counts grants that raced another client's delete
	// of the granted node (the holder must then learn it lost the grant);
	// ForeignExcusedOverlaps the overlaps of holders that followed such
	// deletes: the other client broke the lock, not the recipe.
	ForeignRacedGrants     int64 `json:"foreign_raced_grants,omitempty"`
	ForeignExcusedOverlaps int64 `json:"foreign_excused_overlaps,omitempty"`
	// ForeignDeletedHolders counts holders whose node another client
	// deleted while they held it (it had listed the node as a waiter's);
	// each must learn it lost the lock, by its release at the latest.
	ForeignDeletedHolders int64 `json:"foreign_deleted_holders,omitempty"`
	// LostGrants counts grants held across a client pause (pause-client)
	// that were lost: the session expired under them, or the release said
	// so. LostGrantsReported counts those whose release returned an error
	// wrapping ErrLost: every one must be (a violation otherwise).
	LostGrants         int64 `json:"lost_grants,omitempty"`
	LostGrantsReported int64 `json:"lost_grants_reported,omitempty"`
	// LeftoverZnodes counts recipe nodes still in the namespace once every
	// client had finished; LeftoverPaths names some of them. -1 when the
	// namespace could not be looked at (NotChecked says why).
	LeftoverZnodes int64    `json:"leftover_znodes"`
	LeftoverPaths  []string `json:"leftover_paths,omitempty"`
	// Violations describe the failures, one line each (at most a few per
	// kind).
	Violations []string `json:"violations"`
	// NotChecked lists what could not be checked, one line each (the
	// leftover znodes when the servers were gone after the window, the
	// part of the window the servers were unreachable): not a violation,
	// and not a pass either.
	NotChecked []string `json:"not_checked,omitempty"`
	// Passed is true when every check ran (NotChecked is empty) and none
	// failed.
	Passed bool `json:"passed"`
	// Warnings are findings that fail no check but must not read as a
	// pass: a queue backlog that grew through the window, an open-model
	// run that missed its rate.
	Warnings []string `json:"warnings,omitempty"`
}

// Progress is a run's state once per interval.
type Progress struct {
	// Name is the run's name (a compare step's name, or the scenario's).
	Name   string
	Recipe scenarios.Recipe
	RunID  string
	// State is "ramping up", "running", "stopping" or "done".
	State string
	// Elapsed is the time since the first session was opened; Window the
	// time since operations began (0 during a stampede's ramp-up);
	// Duration the planned length of the window (0 when bounded by
	// operations).
	Elapsed, Window, Duration time.Duration
	// Clients is how many clients the run has, SessionsAlive how many
	// sessions are open (not expired or closed: a session whose
	// connection is down still counts), SessionsConnected how many of
	// them are connected now.
	Clients, SessionsAlive, SessionsConnected int
	// LocksQuiet is how many of the run's locks saw no release in the
	// last QuietLock (lock recipes; 0 before the window opens).
	LocksQuiet int
	// Ops counts completed operations so far; Rate is operations per
	// second over the last interval.
	Ops  int64
	Rate float64
	// RampOps counts the operations of the ramp-up, once the window has
	// opened (Ops then counts the window's): the run's are the two added.
	RampOps int64
	// MainPhase is the phase the progress line shows (acquire for locks);
	// Main its summary so far.
	MainPhase metrics.Phase
	Main      metrics.Summary
	// Phases summarise every phase with values so far.
	Phases map[metrics.Phase]metrics.Summary
	// Errors counts failed operations by kind so far.
	Errors       int64
	ErrorsByKind map[string]int64
	// Throughput is operations per second per interval so far.
	Throughput []float64
	// Totals are the raw counts since the window opened, which the
	// figures are computed from (server counts polled once per interval;
	// absent until known).
	Totals figures.Totals
	// QueueDepth is the queue's current depth (queue scenarios).
	QueueDepth int64
	// Violations lists failed checks so far.
	Violations []string
	// Checks are the checks this run makes while it goes, with their
	// counts so far (checkList's order); a check the run does not make is
	// not here (not checked is not 0). ViolationCounts has them by key.
	Checks []CheckOutcome
	// Faults lists the faults injected so far, in time order.
	Faults []Event

	// With Options.ProgressPhases only:
	// Buckets are every phase's latencies so far in power-of-two buckets.
	Buckets map[metrics.Phase][]metrics.Bucket
	// Timeline is every interval so far (throughput, p50/p99 per phase).
	Timeline []metrics.IntervalStats
	// Lock is who waits on whom at the run's first lock (lock recipes,
	// while the run goes; nil in the final progress).
	Lock *WaitGraph

	// PerProcess, in the progress of a distributed run's starter, is
	// each process's own figures (its own and the others' last live
	// parts), which the rest of the Progress sums: the metrics endpoint's
	// series per process. Nil elsewhere.
	PerProcess []ProcessProgress
}

// ProcessProgress is one process's own figures in a distributed run.
type ProcessProgress struct {
	// Label names the process: "host:pid", as its own metrics endpoint
	// labels its series.
	Label string
	Progress
}
