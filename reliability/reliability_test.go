package reliability

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/oracle"
	"github.com/zkherd/zkherd/scenarios"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// chaosRun returns built-in scenario name cut down to d, with the faults
// that fall in it.
func chaosRun(t *testing.T, name string, d time.Duration) scenarios.Run {
	t.Helper()
	spec, ok := scenarios.Builtin(name)
	if !ok {
		t.Fatalf("no built-in scenario %q", name)
	}
	spec.Duration = d
	var kept []scenarios.Fault
	for _, f := range spec.Faults {
		if f.At < d && f.Every < d {
			kept = append(kept, f)
		}
	}
	spec.Faults = kept
	if err := spec.Validate(); err != nil {
		t.Fatalf("scenario %s cut down to %v: %v", name, d, err)
	}
	return spec.Runs()[0]
}

// chaosEnsemble starts an ensemble of nodes configured as run asks: its
// servers grant at most the scenario's server_max_session_timeout.
func chaosEnsemble(t *testing.T, nodes int, r scenarios.Run) *ensemble.Ensemble {
	t.Helper()
	return enstest.StartConfig(t, nodes, ensemble.ServerConfig{MaxSessionTimeout: r.Spec.ServerMaxSessionTimeout})
}

// run runs r on ens and fails the test on an error.
func run(t *testing.T, ens *ensemble.Ensemble, r scenarios.Run) *loadgen.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := loadgen.Run(ctx, r, loadgen.Options{
		Servers:  ens.Servers(),
		Ensemble: ens,
		Logf:     t.Logf,
	})
	if err != nil {
		t.Fatalf("Run(%s): %v", r.Name, err)
	}
	for _, e := range res.Events {
		t.Logf("%6.2fs %s: %s", e.At.Sub(res.WindowStart).Seconds(), e.Kind, e.Detail)
	}
	t.Logf("errors by kind: %v; ops %d", res.Metrics.Counts.ErrorsByKind, res.Ops)
	for _, n := range res.Notes {
		t.Logf("note: %s", n)
	}
	return res
}

// checkPassed checks that the run passed every check.
func checkPassed(t *testing.T, res *loadgen.Result) {
	t.Helper()
	c := res.Checks
	if !c.Passed || c.MutualExclusionViolations != 0 || c.FencingViolations != 0 || c.DoubleLeaders != 0 ||
		c.LostItems != 0 || c.DuplicateItems != 0 || c.LeftoverZnodes != 0 {
		hint := ""
		if c.LeftoverZnodes != 0 || c.DuplicateItems != 0 {
			hint = " (an orphan or duplicate node after a cut on create: see \"Found\" in docs/RELIABILITY.md)"
		}
		t.Errorf("checks: %+v, want every check passed%s", c, hint)
	}
	if res.Ops == 0 {
		t.Errorf("no operation completed under faults")
	}
}

func TestFairLockChaos(t *testing.T) {
	r := chaosRun(t, "fair-lock-chaos", 12*time.Second)
	ens := chaosEnsemble(t, 3, r)
	res := run(t, ens, r)
	checkPassed(t, res)
	f := res.Faults
	if f == nil {
		t.Fatal("no faults summary")
	}
	if f.SessionsExpired < 2 || f.LeaderKills != 1 || f.Pauses != 1 || f.CutsOnCreate < 3 || f.CutsOnDelete < 3 {
		t.Errorf("faults: %+v; want at least 2 sessions expired, 1 leader kill, 1 pause, 3 cuts on create and 3 on delete", f)
	}
	if fe := res.Fencing; fe == nil || fe.Writes == 0 || fe.OverlapCount != 0 || fe.Rejected != 0 {
		t.Errorf("fencing: %+v; want writes and no overlap", fe)
	}
}

func TestQueueChaos(t *testing.T) {
	// 18 s: the leader kill due at 10 s waits for the member killed at
	// 3 s to be back and serving, which a loaded machine can delay by
	// seconds (its JVM's start).
	r := chaosRun(t, "queue-chaos", 18*time.Second)
	ens := chaosEnsemble(t, 3, r)
	res := run(t, ens, r)
	checkPassed(t, res)
	f := res.Faults
	if f == nil {
		t.Fatal("no faults summary")
	}
	if f.SessionsExpired < 2 || f.MemberKills != 1 || f.LeaderKills != 1 || f.CutsOnCreate < 3 || f.CutsOnDelete < 3 {
		t.Errorf("faults: %+v; want at least 2 sessions expired, 1 member and 1 leader kill, 3 cuts on create and 3 on delete (problems: %q)", f, f.Problems)
	}
}

func TestElectionChaos(t *testing.T) {
	r := chaosRun(t, "election-chaos", 12*time.Second)
	ens := chaosEnsemble(t, 3, r)
	res := run(t, ens, r)
	checkPassed(t, res)
	f := res.Faults
	if f == nil {
		t.Fatal("no faults summary")
	}
	if f.SessionsExpired < 1 || f.LeaderKills != 1 || f.Pauses != 1 || f.CutsOnCreate < 3 || f.CutsOnDelete < 3 {
		t.Errorf("faults: %+v; want at least 1 session expired, 1 leader kill, 1 pause, 3 cuts on create and 3 on delete", f)
	}
	if fe := res.Fencing; fe == nil || fe.Writes == 0 || fe.OverlapCount != 0 {
		t.Errorf("fencing: %+v; want writes and no overlap", fe)
	}
}

// TestZombie runs holders that ignore Lost(): when the holder's session is
// expired, the next waiter is granted the lock while the old holder keeps
// writing, and the guarded resource must reject every one of its writes;
// the oracle finds the history no mutex's.
func TestZombie(t *testing.T) {
	ens := enstest.Start(t, 1)
	r := chaosRun(t, "fair-lock-zombie", 9*time.Second)
	res, err := loadgen.Run(context.Background(), r, loadgen.Options{Servers: ens.Servers(), Ensemble: ens})
	if err != nil {
		t.Fatal(err)
	}
	fe := res.Fencing
	if fe == nil || !fe.IgnoreLost {
		t.Fatalf("fencing: %+v; want the figures of a run that ignores Lost()", fe)
	}
	if fe.OverlapCount == 0 || fe.Rejected == 0 || len(fe.Overlaps) == 0 {
		t.Fatalf("fencing: %+v; want overlaps caught (stale writes rejected)", fe)
	}
	for _, o := range fe.Overlaps {
		if o.StaleToken >= o.NewerToken || o.Rejected == 0 || !o.StaleLost {
			t.Errorf("overlap %v: want a stale token below the newer one, rejected writes, and a holder that had been told", o)
		}
	}
	c := res.Checks
	if c.MutualExclusionViolations != 0 || c.FencingViolations != 0 || c.LeftoverZnodes != 0 {
		t.Errorf("checks: %+v; want no violation but linearizability's: every overlap was caught by fencing", c)
	}
	// The oracle: holders acting on grants they were told they lost are
	// no mutex, fenced or not. The run fails on that alone, and the
	// window drawn is the zombie's grant and the next one.
	l := res.Linearizability
	if l == nil || l.Result != oracle.ResultViolation || l.Violation == nil {
		t.Fatalf("linearizability %+v, want a violation", l)
	}
	if n := len(l.Violation.Operations); n < 3 || n > 6 || len(l.Violation.HTML) == 0 || !strings.Contains(l.Violation.Detail, "still acting after it was told it lost the lock") {
		t.Errorf("violation window of %d operations, %q, drawn %v; want the zombie's grant, its use and the next grant", n, l.Violation.Detail, len(l.Violation.HTML) > 0)
	}
	if c.Passed || len(c.Violations) != 1 || !strings.HasPrefix(c.Violations[0], "linearizability: ") {
		t.Errorf("checks passed %v, violations %q; want failed by linearizability alone", c.Passed, c.Violations)
	}
	caught := 0
	for _, e := range res.Events {
		if strings.Contains(e.Detail, "overlap caught by fencing") {
			caught++
		}
	}
	if caught == 0 {
		t.Errorf("no event shows an overlap caught by fencing")
	}
}
