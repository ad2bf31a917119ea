package loadrun

import (
	"context"
	"errors"
	"github.com/zkherd/zkherd/connstr"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zkherd/zkherd/internal/exit"
	"github.com/zkherd/zkherd/scenarios"
)

// Request is a load run as `zkherd load` asks for it, value by value as
// the user gave them: the command binds its flags to it, and Mode and
// Overrides check it, so that every rule about which values go together
// is written once, here, and tested without the command line. Messages
// name the values at fault by their flag's name without its dashes
// (exit.Inputf): the command names them as its flags.
type Request struct {
	Scenario string
	Clients  int
	Duration time.Duration
	Ops      uint64
	Rate     float64
	// Stages is --rate given as a schedule, RATE:DURATION,... (ParseRate).
	Stages      []scenarios.Stage
	Arrival     string
	Thresholds  []string
	AbortOnFail bool
	// FindMax searches for the highest rate within this threshold.
	FindMax     string
	RampUp      float64
	SourceAddrs int
	Out         string

	// Processes, RunID, Join and JoinTimeout ask for a run spread over
	// processes; Sweep for a run at each of several client counts.
	Processes   int
	RunID       string
	Join        string
	JoinTimeout time.Duration
	Sweep       string
	// CoordServer, with a run spread over processes, puts its
	// coordination (plan, barriers, parts) on other servers than those
	// under test (--coord-server).
	CoordServer string
	// Spawn starts the run for this many processes and the others on
	// this machine; Hosts for one more per host, started there over ssh
	// with SSHOptions (ssh -o).
	Spawn      int
	Hosts      []string
	SSHOptions []string
	// Index is this process's number in a run of Processes processes
	// started together, as a Kubernetes Indexed Job's pods are: 0 starts
	// the run RunID, the others join it.
	Index int

	// SessionTimeout is every client's session timeout, when given.
	SessionTimeout time.Duration

	// Given says which values the user gave: a zero given is a mistake,
	// one not given means the scenario's own.
	ClientsGiven, DurationGiven, OpsGiven, RateGiven bool
	ProcessesGiven, JoinGiven, SweepGiven            bool
	SpawnGiven, HostsGiven, IndexGiven               bool
	SessionTimeoutGiven                              bool
}

// Mode is the kind of run a Request asks for.
type Mode int

// The modes of Request.Mode.
const (
	ModePlain Mode = iota // one process, once
	ModeSweep             // once per client count, then a scale model
	ModeStart             // spread over processes: this one starts it
	ModeJoin              // spread over processes: this one joins it
)

// Mode checks which flags of the distributed and sweep runs go together,
// and says which run q asks for.
func (q *Request) Mode() (Mode, error) {
	launched := q.SpawnGiven || q.HostsGiven
	switch {
	case len(q.SSHOptions) > 0 && !q.HostsGiven:
		return 0, exit.Inputf("{ssh-option} goes with {hosts}, which starts processes over ssh")
	case !q.JoinGiven && !q.ProcessesGiven && !q.SweepGiven && !launched:
		return ModePlain, nil
	case q.SweepGiven && (q.JoinGiven || q.ProcessesGiven || launched):
		return 0, exit.Inputf("{sweep} runs in one process; it cannot be combined with {join}, {processes}, {spawn} or {hosts}")
	case q.IndexGiven:
		return q.indexMode()
	case launched:
		return ModeStart, q.checkLaunch()
	case q.SweepGiven:
		return ModeSweep, nil
	case q.JoinGiven && q.ProcessesGiven:
		return 0, exit.Inputf("{join} and {processes}: a process either starts a distributed run ({processes}) or joins one ({join})")
	case q.JoinTimeout <= 0:
		return 0, exit.Inputf("{join-timeout} %v: must be above 0", q.JoinTimeout)
	case q.JoinGiven:
		return ModeJoin, q.checkJoin()
	case q.Processes < 1 || q.Processes > maxProcesses:
		return 0, exit.Inputf("{processes} %d: choose 1 to %d", q.Processes, maxProcesses)
	}
	return ModeStart, nil
}

// checkLaunch checks --spawn and --hosts, which start the run and its
// other processes.
func (q *Request) checkLaunch() error {
	switch {
	case q.SpawnGiven && q.HostsGiven:
		return exit.Inputf("{spawn} and {hosts}: choose one ({spawn} starts the processes on this machine, {hosts} one on each host)")
	case q.JoinGiven:
		return exit.Inputf("{join} joins a run started elsewhere; {spawn} and {hosts} start one: drop one of them")
	case q.ProcessesGiven:
		return exit.Inputf("{spawn} and {hosts} set the number of processes; drop {processes}")
	case q.JoinTimeout <= 0:
		return exit.Inputf("{join-timeout} %v: must be above 0", q.JoinTimeout)
	case q.SpawnGiven && (q.Spawn < 1 || q.Spawn > maxProcesses):
		return exit.Inputf("{spawn} %d: choose 1 to %d processes, this one included", q.Spawn, maxProcesses)
	case q.HostsGiven && (len(q.Hosts) == 0 || len(q.Hosts) >= maxProcesses):
		return exit.Inputf("{hosts}: name 1 to %d hosts, separated by commas, such as {hosts} zk-load-1,zk-load-2", maxProcesses-1)
	}
	for _, h := range q.Hosts {
		if h == "" || strings.HasPrefix(h, "-") || strings.ContainsAny(h, " \t'\"") {
			return exit.Inputf("{hosts} %q: not a host name; give names or [user@]host separated by commas", h)
		}
	}
	return nil
}

// indexMode checks --index and says which part this process plays.
func (q *Request) indexMode() (Mode, error) {
	switch {
	case q.JoinGiven || q.SpawnGiven || q.HostsGiven:
		return 0, exit.Inputf("{index} numbers processes started together with {processes} and {run-id}; drop {join}, {spawn} and {hosts}")
	case !q.ProcessesGiven || q.RunID == "":
		return 0, exit.Inputf("{index} needs {processes} and {run-id}, the same in every process (in a Kubernetes Job: {run-id} from the Job's uid, {index} $(JOB_COMPLETION_INDEX))")
	case q.Processes < 1 || q.Processes > maxProcesses:
		return 0, exit.Inputf("{processes} %d: choose 1 to %d", q.Processes, maxProcesses)
	case q.Index < 0 || q.Index >= q.Processes:
		return 0, exit.Inputf("{index} %d: choose 0 (starts the run) to %d, below {processes} %d", q.Index, q.Processes-1, q.Processes)
	case q.JoinTimeout <= 0:
		return 0, exit.Inputf("{join-timeout} %v: must be above 0", q.JoinTimeout)
	case q.Index == 0:
		return ModeStart, nil
	}
	return ModeJoin, nil
}

// processes is how many processes a started run has.
func (q *Request) processes() int {
	switch {
	case q.SpawnGiven:
		return q.Spawn
	case q.HostsGiven:
		return len(q.Hosts) + 1
	}
	return q.Processes
}

// maxProcesses bounds the processes of one run.
const maxProcesses = 64

// checkJoin refuses what a joining process takes from the run it joins.
func (q *Request) checkJoin() error {
	switch {
	case q.Join == "":
		return exit.Inputf("{join} needs the id of a run, as printed by the process that started it with {processes}")
	case q.Scenario != "" || q.ClientsGiven || q.DurationGiven || q.OpsGiven:
		return exit.Inputf("{join} takes the scenario, clients and duration from the run it joins; drop {scenario}, {clients}, {duration} and {ops}")
	case q.RunID != "":
		return exit.Inputf("{join} names the run; drop {run-id}")
	case q.Out != "":
		return exit.Inputf("{join}: the merged report is written by the process that started the run; drop {out}")
	}
	return nil
}

// Overrides checks the scenario values of q and turns them into
// overrides of the scenario.
func (q *Request) Overrides() (scenarios.Overrides, error) {
	var ov scenarios.Overrides
	if q.Scenario == "" {
		return ov, exit.Inputf("{scenario} is required: a built-in name (%s) or a YAML file", strings.Join(scenarios.Names(), ", "))
	}
	switch {
	case q.ClientsGiven && q.Clients <= 0:
		return ov, exit.Inputf("{clients} %d: must be at least 1", q.Clients)
	case q.DurationGiven && q.Duration <= 0:
		return ov, exit.Inputf("{duration} %v: must be above 0", q.Duration)
	case q.OpsGiven && q.Ops == 0:
		return ov, exit.Inputf("{ops} 0: must be at least 1")
	case q.DurationGiven && q.OpsGiven:
		return ov, exit.Inputf("{duration} and {ops}: give one bound, not both")
	case q.SourceAddrs < 0 || q.SourceAddrs > 254:
		return ov, exit.Inputf("{source-addrs} %d: choose 1 to 254 (0 for automatic)", q.SourceAddrs)
	case q.RampUp < 0:
		return ov, exit.Inputf("{ramp-up} %v: must be above 0 sessions per second", q.RampUp)
	case q.RateGiven && q.Rate <= 0 && len(q.Stages) == 0:
		return ov, exit.Inputf("{rate} %v: must be above 0 operations per second", q.Rate)
	case len(q.Stages) > 0 && (q.DurationGiven || q.OpsGiven):
		return ov, exit.Inputf("{rate} %s is a schedule that sets the run's length (%v): drop {duration} and {ops}", scenarios.FormatStages(q.Stages), scenarios.StagesDuration(q.Stages))
	case len(q.Stages) > 0 && q.Arrival != "" && q.Arrival != string(scenarios.Constant):
		return ov, exit.Inputf("{rate} %s with {arrival} %s: a schedule of rates paces constant arrivals only", scenarios.FormatStages(q.Stages), q.Arrival)
	case q.Arrival != "" && !slices.Contains(scenarios.ArrivalKinds(), scenarios.ArrivalKind(q.Arrival)):
		return ov, exit.Inputf("{arrival} %s: choose closed, stampede, constant or poisson", q.Arrival)
	case q.RateGiven && q.Arrival != "" && !scenarios.ArrivalKind(q.Arrival).Open():
		return ov, exit.Inputf("{rate} with {arrival} %s: a rate needs an open model (constant or poisson)", q.Arrival)
	}
	for _, expr := range q.Thresholds {
		t, err := scenarios.ParseThreshold(expr)
		if te := (*scenarios.ThresholdError)(nil); errors.As(err, &te) {
			return ov, exit.Inputf("{threshold} %s", te.Detail())
		} else if err != nil {
			return ov, exit.Inputf("{threshold} %v", err)
		}
		ov.Thresholds = append(ov.Thresholds, t)
	}
	ov.Arrival, ov.Rate, ov.RampUp, ov.Stages = scenarios.ArrivalKind(q.Arrival), q.Rate, q.RampUp, q.Stages
	if q.ClientsGiven {
		ov.Clients = q.Clients
	}
	if q.DurationGiven {
		ov.Duration = q.Duration
	}
	if q.OpsGiven {
		ov.Ops = q.Ops
	}
	if q.SessionTimeoutGiven {
		if err := CheckSessionTimeout(q.SessionTimeout); err != nil {
			return ov, err
		}
		ov.SessionTimeout = q.SessionTimeout
	}
	return ov, nil
}

// CheckSessionTimeout refuses a session timeout servers would not grant.
func CheckSessionTimeout(d time.Duration) error {
	if d < time.Second || d > 10*time.Minute {
		return exit.Inputf("{session-timeout} %v: choose between 1s and 10m (servers clamp to their min/max session timeout)", d)
	}
	return nil
}

// Job is a Request checked and made ready to run (Prepare): one plan, a
// sweep, a search for the highest rate, or a run spread over processes,
// started or joined.
type Job struct {
	req     Request // as given: the launcher of a started run reads it
	mode    Mode
	plan    *Plan
	sweep   *Sweep
	findMax *FindMax
	dist    Distributed
	join    string
}

// Prepare checks q (its mode, its values, the scenario) and makes its job,
// so that a mistake in the request or the scenario is reported before one
// about the servers (the Runner's).
func Prepare(q *Request) (*Job, error) {
	mode, err := q.Mode()
	if err != nil {
		return nil, err
	}
	var coord connstr.ConnectString
	if q.CoordServer != "" {
		if mode != ModeStart && mode != ModeJoin {
			return nil, exit.Inputf("{coord-server} coordinates a run spread over processes; use it with {processes}, {spawn}, {hosts} or {join}")
		}
		if coord, err = connstr.Parse(q.CoordServer); err != nil {
			return nil, exit.Inputf("{coord-server} %q: %v; give host:port[,host:port...][/chroot]", q.CoordServer, err)
		}
	}
	d := Distributed{Processes: q.processes(), RunID: q.RunID, JoinTimeout: q.JoinTimeout, Coord: coord}
	if mode == ModeJoin { // the plan comes from the run joined
		j := &Job{req: *q, mode: mode, join: q.Join, dist: Distributed{JoinTimeout: q.JoinTimeout, Coord: coord}}
		if q.IndexGiven { // the run's, the same in every process, which may not be started yet
			j.join, j.dist.WaitForRun = q.RunID, true
		}
		return j, nil
	}
	var counts []int
	if mode == ModeSweep {
		if counts, err = ParseSweep(q.Sweep); err != nil {
			return nil, err
		}
		if q.ClientsGiven {
			return nil, exit.Inputf("{sweep} sets the clients of each run; drop {clients}")
		}
	}
	ov, err := q.Overrides()
	if err != nil {
		return nil, err
	}
	j := &Job{req: *q, mode: mode, dist: d}
	if mode == ModeSweep {
		j.sweep, err = NewSweep(q.Scenario, counts, ov, q.Out)
	} else {
		j.plan, err = NewPlan(q.Scenario, ov, q.Out)
		if j.plan != nil {
			j.plan.AbortOnFail = q.AbortOnFail
		}
	}
	if err == nil && q.AbortOnFail {
		err = checkAbort(mode, j.plan)
	}
	if err != nil {
		return nil, err
	}
	if q.FindMax != "" {
		switch {
		case mode != ModePlain:
			return nil, exit.Inputf("{find-max} runs in one process; drop {sweep}, {processes} and {join}")
		case q.RateGiven || q.Arrival != "":
			return nil, exit.Inputf("{find-max} chooses the rate (constant arrivals): drop {rate} and {arrival}")
		case q.AbortOnFail:
			return nil, exit.Inputf("{find-max} and {abort-on-fail}: the search runs past rates over its target; drop {abort-on-fail}")
		}
		if j.findMax, err = NewFindMax(j.plan, q.FindMax); err != nil {
			return nil, err
		}
	}
	return j, nil
}

// Live reports whether the job is one plan run once in this process, the
// kind of job the dashboard shows (not a sweep, a search or a distributed
// run).
func (j *Job) Live() bool { return j.mode == ModePlain && j.findMax == nil }

// Plan is the plan of the job (a sweep's last, the one with most
// clients), nil for a join, whose plan comes from the run joined.
func (j *Job) Plan() *Plan {
	if j.sweep != nil {
		return j.sweep.Plans[len(j.sweep.Plans)-1]
	}
	return j.plan
}

// Do runs the job: the one dispatch between the modes.
func (r *Runner) Do(ctx context.Context, j *Job) error {
	defer r.closeEvents()
	switch {
	case j.mode == ModeJoin:
		if j.req.IndexGiven && len(r.Target.Server.Servers) == 0 {
			return exit.Inputf("{index} needs {server}: servers every process of the run reaches")
		}
		if len(r.Target.Server.Servers) == 0 {
			return exit.Inputf("{join} needs {server}: the servers of the run to join")
		}
		return r.Join(ctx, j.join, j.dist)
	case j.findMax != nil:
		return r.FindMax(ctx, j.findMax)
	case j.mode == ModeSweep:
		return r.Sweep(ctx, j.sweep)
	case j.mode == ModeStart:
		if j.req.HostsGiven && len(r.Target.Server.Servers) == 0 {
			return exit.Inputf("{hosts} needs {server}: servers every host reaches (a local ensemble listens on this machine's loopback only)")
		}
		if j.req.IndexGiven && len(r.Target.Server.Servers) == 0 {
			return exit.Inputf("{index} needs {server}: servers every process of the run reaches")
		}
		d := j.dist
		d.Launcher = j.req.launcher(r)
		return r.Start(ctx, j.plan, d)
	}
	return r.Run(ctx, j.plan)
}

// ParseRate reads --rate: operations per second ("300") or a schedule of
// stages ("100:30s,500:30s,1000:60s").
func ParseRate(text string) (rate float64, stages []scenarios.Stage, err error) {
	if strings.Contains(text, ":") {
		st, err := scenarios.ParseStages(text)
		if err != nil {
			return 0, nil, exit.Inputf("{rate} %s: %s", text, strings.TrimPrefix(err.Error(), scenarios.ErrStages.Error()+": "))
		}
		return 0, st, nil
	}
	r, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
	if err != nil {
		return 0, nil, exit.Inputf("{rate} %s: give operations per second, such as {rate} 300, or stages RATE:DURATION, such as {rate} 100:30s,500:30s", text)
	}
	return r, nil, nil
}

// checkAbort refuses --abort-on-fail where it cannot act: a sweep or a
// distributed run, or a plan without thresholds.
func checkAbort(mode Mode, plan *Plan) error {
	if mode != ModePlain {
		return exit.Inputf("{abort-on-fail} works in a plain run only, not with {sweep} or {processes}")
	}
	for _, r := range plan.Runs {
		if len(r.Thresholds) > 0 {
			return nil
		}
	}
	return exit.Inputf("{abort-on-fail} stops a run that crosses a threshold: give one with {threshold}, such as {threshold} 'errors<=0'")
}
