package loadrun

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/internal/exit"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/report"
	"github.com/zkherd/zkherd/scalemodel"
	"github.com/zkherd/zkherd/scenarios"
)

// Bounds of a sweep, to keep it within one machine's reach.
const (
	MaxSweepPoints  = 8
	MaxSweepClients = 10_000
	// minSweepOps is the fewest operations a run needs for its throughput
	// to be fitted: fewer means its window was mostly the stampede's start.
	minSweepOps = 20
)

// ParseSweep reads --sweep: client counts, at least two, ascending.
func ParseSweep(s string) ([]int, error) {
	var counts []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		n, err := strconv.Atoi(strings.ReplaceAll(f, "_", ""))
		if err != nil || n < 1 {
			return nil, exit.Inputf("{sweep} %s: %q is not a client count (want whole numbers such as 100,500,1000,2000)", s, f)
		}
		if n > MaxSweepClients {
			return nil, exit.Inputf("{sweep} %s: %d clients is more than one machine measures well (at most %d); the model predicts beyond", s, n, MaxSweepClients)
		}
		counts = append(counts, n)
	}
	slices.Sort(counts)
	counts = slices.Compact(counts)
	switch {
	case len(counts) < 2:
		return nil, exit.Inputf("{sweep} %s: give at least two client counts to fit a model, such as 100,500,1000,2000", s)
	case len(counts) > MaxSweepPoints:
		return nil, exit.Inputf("{sweep} %s: at most %d client counts", s, MaxSweepPoints)
	}
	return counts, nil
}

// Sweep is a scenario run at several client counts, for a scale model.
type Sweep struct {
	// Plans has one plan per client count, ascending; the last one carries
	// the report directory.
	Plans  []*Plan
	counts []int
}

// NewSweep plans scenario at each of counts (as ParseSweep returns them)
// with the other overrides; the report goes to out.
func NewSweep(scenario string, counts []int, ov scenarios.Overrides, out string) (*Sweep, error) {
	sw := &Sweep{counts: counts}
	for i, n := range counts {
		ov.Clients = n
		dir := ""
		if i == len(counts)-1 {
			dir = out // checked once
		}
		p, err := NewPlan(scenario, ov, dir)
		if err != nil {
			return nil, err
		}
		sw.Plans = append(sw.Plans, p)
	}
	return sw, nil
}

// sweepShape is the scale model's form for a recipe: a line where its
// cost grows with the waiters (the herd locks), flat otherwise.
func sweepShape(r scenarios.Recipe) scalemodel.Shape {
	if r.Spec().GrowsWithWaiters {
		return scalemodel.Linear
	}
	return scalemodel.Constant
}

// Sweep runs the scenario at each client count on one target (sized for
// the largest count), fits a scale model per recipe and reports model
// against measurements.
func (r *Runner) Sweep(ctx context.Context, sw *Sweep) error {
	defer r.closeEvents()
	last := sw.Plans[len(sw.Plans)-1]
	env, err := r.Target.Open(ctx, last, last.clients())
	if err != nil {
		return err
	}
	defer env.Close()
	var (
		results []*loadgen.Result
		partial bool
		fit     = newSweepFit(r.Target.Name)
	)
	out := r.show(ctx, last, env.Where(), func(ctx context.Context, sink sink) Outcome {
		for i, p := range sw.Plans {
			x := execution{announce: func(_ int, run scenarios.Run) string {
				return fmt.Sprintf("sweep %d of %d: %s with %d clients", i+1, len(sw.Plans), run.Name, run.Clients)
			}}
			o := x.run(ctx, env.LoadOptions(), p, sink)
			if o.Err != nil {
				return o
			}
			for _, res := range o.Results {
				fit.add(res)
				results = append(results, res)
			}
			if o.Partial {
				partial = true
				break
			}
		}
		return Outcome{Results: results, Partial: partial}
	})
	r.endEvents()
	if out.Err != nil {
		return runError(out.Err)
	}
	if len(out.Results) == 0 {
		return ctx.Err()
	}
	title := fmt.Sprintf("%s sweep, %s clients", last.Spec.Name, joinInts(sw.counts))
	rep := r.report(title, env, last.Out)
	run := rep.Build(out.Results, out.Partial)
	run.ScaleModel = fit.model(r.Stderr)
	return rep.Finish(r.Stdout, run, nil)
}

// sweepFit gathers a sweep's measured points per recipe.
type sweepFit struct {
	name     func(input string) string // Target.Name, for the advice of an excluded point
	points   map[string][]scalemodel.Point
	excluded map[string][]report.ScalePoint
	names    []string
	recipes  map[string]scenarios.Recipe
}

func newSweepFit(name func(input string) string) *sweepFit {
	return &sweepFit{name: name, points: map[string][]scalemodel.Point{}, excluded: map[string][]report.ScalePoint{}, recipes: map[string]scenarios.Recipe{}}
}

// add takes one run's result as a point, or as an excluded one saying
// why; it renames the result name@clients for the report.
func (f *sweepFit) add(r *loadgen.Result) {
	name := r.Run.Name
	if _, ok := f.recipes[name]; !ok {
		f.names = append(f.names, name)
		f.recipes[name] = r.Run.Recipe
	}
	why := ""
	switch {
	case r.Partial:
		why = "the run was stopped early"
	case r.Ops < minSweepOps:
		why = exit.Advice(f.name, "only %d operations in the %v window; run longer ({duration})", r.Ops, r.Run.Duration)
	case sweepShape(r.Run.Recipe) == scalemodel.Constant && r.Ops < int64(r.Run.Clients):
		// The window then measures every client's first enqueue (a create
		// and a listing each, paid once) more than the recipe's steady
		// state.
		why = exit.Advice(f.name, "%d operations for %d clients: the window measures the clients' first enqueue more than the steady state; run longer ({duration})", r.Ops, r.Run.Clients)
	}
	switch {
	case why != "":
		f.excluded[name] = append(f.excluded[name], report.ScalePoint{Clients: r.Run.Clients, Measured: true,
			ThroughputPerS: r.Throughput, PacketsPerAcquisition: figures.Get(r.Totals, figures.ServerPacketsPerAcquisition),
			ModelThroughputPerS: -1, ModelPacketsPerAcquisition: -1, Excluded: why})
	default:
		f.points[name] = append(f.points[name], scalemodel.Point{Clients: r.Run.Clients, Throughput: r.Throughput,
			PacketsPerAcquisition: figures.Get(r.Totals, figures.ServerPacketsPerAcquisition)})
	}
	r.Run.Name = fmt.Sprintf("%s@%d", name, r.Run.Clients)
}

// model fits each recipe's points; a recipe that cannot be fitted is said
// on log.
func (f *sweepFit) model(log io.Writer) *report.ScaleModel {
	sm := &report.ScaleModel{}
	for _, name := range f.names {
		shape := sweepShape(f.recipes[name])
		m, err := scalemodel.Fit(f.points[name], shape)
		if err != nil {
			fmt.Fprintf(log, "no scale model for %s: %v\n", name, err)
			continue
		}
		sr := scaleRecipe(name, f.recipes[name], shape, m, f.points[name])
		sr.Points = append(sr.Points, f.excluded[name]...)
		slices.SortStableFunc(sr.Points, func(a, b report.ScalePoint) int {
			if a.Measured != b.Measured {
				if a.Measured {
					return -1
				}
				return 1
			}
			return a.Clients - b.Clients
		})
		sm.Recipes = append(sm.Recipes, sr)
	}
	return sm
}

// scaleRecipe is one recipe's section of the report: the measured points
// with the model's values there, then the model at scalemodel.DefaultTargets.
func scaleRecipe(name string, r scenarios.Recipe, shape scalemodel.Shape, m scalemodel.Model, pts []scalemodel.Point) report.ScaleRecipe {
	packets, tput := m.Describe()
	out := report.ScaleRecipe{Name: name, Recipe: string(r), Shape: shape.String(), PacketsModel: packets, ThroughputModel: tput}
	for _, p := range pts {
		pr := m.Predict(p.Clients)
		out.Points = append(out.Points, report.ScalePoint{Clients: p.Clients, Measured: true,
			ThroughputPerS: p.Throughput, PacketsPerAcquisition: p.PacketsPerAcquisition,
			ModelThroughputPerS: pr.Throughput, ModelPacketsPerAcquisition: pr.PacketsPerAcquisition})
	}
	for _, n := range scalemodel.DefaultTargets {
		pr := m.Predict(n)
		out.Points = append(out.Points, report.ScalePoint{Clients: n, ThroughputPerS: -1, PacketsPerAcquisition: -1,
			ModelThroughputPerS: pr.Throughput, ModelPacketsPerAcquisition: pr.PacketsPerAcquisition})
	}
	return out
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}
