package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/zkherd/zkherd/internal/format"
)

// ErrTolerance is matched by the error ParseTolerance returns.
var ErrTolerance = errors.New("report: bad tolerance")

// ParseTolerance reads how much worse a figure may get before it counts
// as a regression: "10%" (or "10") is 0.10.
func ParseTolerance(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%w %q: give a percentage such as 10%%", ErrTolerance, s)
	}
	return v / 100, nil
}

// Regression is a main figure of a scenario that got worse from run A to
// run B by more than the tolerance.
type Regression struct {
	Scenario, Figure string
	A, B             float64
	// Worse is how much worse B is, as a fraction of A (1 when A is 0).
	Worse  float64
	format func(float64) string
}

func (r Regression) String() string {
	f := r.format
	if f == nil {
		f = func(v float64) string { return fmtNum(v, 1) }
	}
	return fmt.Sprintf("%s: %s %s -> %s (%.0f%% worse)", r.Scenario, r.Figure, f(r.A), f(r.B), 100*r.Worse)
}

// Regressions compares the main figures of each scenario of b with the
// same scenario of a (paired as Compare pairs them): throughput, the main
// phase's p50 and p99, the error rate, and the checks. A figure more than
// tolerance worse (0.10: 10%) is a regression; checks that passed in A and
// fail in B always are.
func Regressions(a, b *Run, tolerance float64) []Regression {
	var out []Regression
	pairs, _, _ := pairScenarios(a.Scenarios, b.Scenarios)
	for _, p := range pairs {
		x, y := p[0], p[1]
		add := func(figure string, va, vb float64, higherIsBetter bool, f func(float64) string) {
			worse := 0.0
			switch {
			case higherIsBetter && va > 0:
				worse = (va - vb) / va
			case !higherIsBetter && va > 0:
				worse = (vb - va) / va
			case !higherIsBetter && va == 0 && vb > 0:
				worse = 1
			}
			if worse > tolerance {
				out = append(out, Regression{Scenario: y.Name, Figure: figure, A: va, B: vb, Worse: worse, format: f})
			}
		}
		add("throughput/s", x.ThroughputPerS, y.ThroughputPerS, true, nil)
		main := x.MainPhase()
		la, okA := x.LatencyMs[main]
		lb, okB := y.LatencyMs[main]
		if okA && okB {
			add(main+" p50", la.P50, lb.P50, false, format.Ms)
			add(main+" p99", la.P99, lb.P99, false, format.Ms)
		}
		rate := func(s *Scenario) float64 { return ratio(float64(s.Errors.Total), float64(s.Operations+s.Errors.Total)) }
		add("error rate", rate(x), rate(y), false, func(v float64) string { return fmtNum(100*v, 2) + "%" })
		if x.Checks.Passed && !y.Checks.Passed {
			out = append(out, Regression{Scenario: y.Name, Figure: "checks", A: 1, B: 0, Worse: 1,
				format: func(v float64) string { return passFail(v > 0) }})
		}
	}
	return out
}

// Incomparable lists why b's figures cannot be judged against a's, one
// line each: paired scenarios of different recipes, arrival models or
// client counts measure different things, and a partial run's figures
// stop before its end. Empty when the gate can judge. (An arrival model
// missing from an older report is not held against it.)
func Incomparable(a, b *Run) []string {
	var out []string
	for _, x := range []struct {
		label string
		run   *Run
	}{{"A", a}, {"B", b}} {
		if x.run.Partial {
			out = append(out, x.label+" is a partial run (stopped before its end): run it again to the end")
		}
	}
	pairs, _, _ := pairScenarios(a.Scenarios, b.Scenarios)
	for _, p := range pairs {
		x, y := p[0], p[1]
		name := y.Name
		if x.Name != y.Name {
			name = x.Name + " (A) vs " + y.Name + " (B)"
		}
		switch {
		case x.Recipe != y.Recipe:
			out = append(out, fmt.Sprintf("%s: recipe %s in A, %s in B", name, x.Recipe, y.Recipe))
		case x.Arrival != "" && y.Arrival != "" && x.Arrival != y.Arrival:
			out = append(out, fmt.Sprintf("%s: arrival %s in A, %s in B", name, x.Arrival, y.Arrival))
		case x.Clients != y.Clients:
			out = append(out, fmt.Sprintf("%s: %d clients in A, %d in B", name, x.Clients, y.Clients))
		case !a.Partial && !b.Partial && (x.Partial || y.Partial):
			out = append(out, name+": a partial scenario (stopped before its end)")
		}
	}
	return out
}

// MarshalJSON writes the regression with its one-line description.
func (r Regression) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Scenario string  `json:"scenario"`
		Figure   string  `json:"figure"`
		A        float64 `json:"a"`
		B        float64 `json:"b"`
		Worse    float64 `json:"worse"`
		Text     string  `json:"text"`
	}{r.Scenario, r.Figure, r.A, r.B, r.Worse, r.String()})
}

// Comparison is two runs compared, as `zkherd report compare -o json`
// prints it: both reports whole (every figure's ratio follows from them)
// and, with a tolerance, the main figures of B worse than A beyond it.
type Comparison struct {
	A *Run `json:"a"`
	B *Run `json:"b"`
	// Tolerance is the fraction a figure may worsen (0.10: 10%); absent
	// when none was given, and then Regressions is empty.
	Tolerance   *float64     `json:"tolerance,omitempty"`
	Regressions []Regression `json:"regressions"`
	// Incomparable, with a tolerance, says why B cannot be judged against
	// A (see Incomparable): the gate then fails whatever the figures.
	Incomparable []string `json:"incomparable,omitempty"`
}

// Compared compares a and b; a negative tolerance asks for no regression
// check.
func Compared(a, b *Run, tolerance float64) Comparison {
	c := Comparison{A: a, B: b, Regressions: []Regression{}}
	if tolerance >= 0 {
		c.Tolerance = &tolerance
		c.Regressions = append(c.Regressions, Regressions(a, b, tolerance)...)
		c.Incomparable = Incomparable(a, b)
	}
	return c
}
