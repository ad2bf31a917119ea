package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/report"
	"github.com/zkherd/zkherd/scalemodel"
	"github.com/zkherd/zkherd/scenarios"
)

// Bounds of a sweep, to keep it within one machine's reach.
const (
	maxSweepPoints  = 8
	maxSweepClients = 10_000
	// minSweepOps is the fewest operations a run needs for its throughput
	// to be fitted: fewer means its window was mostly the stampede's start.
	minSweepOps = 20
)

// parseSweep reads --sweep: client counts, at least two, ascending.
func parseSweep(s string) ([]int, error) {
	var counts []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		n, err := strconv.Atoi(strings.ReplaceAll(f, "_", ""))
		if err != nil || n < 1 {
			return nil, usageErr("--sweep %s: %q is not a client count (want whole numbers such as 100,500,1000,2000)", s, f)
		}
		if n > maxSweepClients {
			return nil, usageErr("--sweep %s: %d clients is more than one machine measures well (at most %d); the model predicts beyond", s, n, maxSweepClients)
		}
		counts = append(counts, n)
	}
	slices.Sort(counts)
	counts = slices.Compact(counts)
	switch {
	case len(counts) < 2:
		return nil, usageErr("--sweep %s: give at least two client counts to fit a model, such as 100,500,1000,2000", s)
	case len(counts) > maxSweepPoints:
		return nil, usageErr("--sweep %s: at most %d client counts", s, maxSweepPoints)
	}
	return counts, nil
}

// sweepShape is the scale model's form for a recipe: the herd locks' cost
// grows with the waiters, the others' is flat.
func sweepShape(r scenarios.Recipe) scalemodel.Shape {
	if r == scenarios.HerdLock || r == scenarios.HerdChildren {
		return scalemodel.Linear
	}
	return scalemodel.Constant
}

// runSweep runs the scenario at each client count of --sweep, fits a scale
// model per recipe and reports model against measurements.
func runSweep(ctx context.Context, g *globalOptions, o *loadOptions, stdout, stderr io.Writer) error {
	counts, err := parseSweep(o.dist.sweep)
	if err != nil {
		return err
	}
	if o.clientsSet {
		return usageErr("--sweep sets the clients of each run; drop --clients")
	}
	var plans []*loadPlan
	for _, n := range counts {
		po := *o
		po.clients, po.clientsSet = n, true
		if n != counts[len(counts)-1] {
			po.out = "" // checked once
		}
		p, err := planLoad(g, &po)
		if err != nil {
			return err
		}
		plans = append(plans, p)
	}
	last := plans[len(plans)-1]
	cs, haveServer, err := g.connectString()
	if err != nil {
		return err
	}
	local := !haveServer
	if local {
		ens, err := startLocalEnsemble(ctx, ensemble.Options{Nodes: last.spec.Effective().Ensemble, NoFsync: true,
			HeapMB: heapFor(counts[len(counts)-1])}, stderr)
		if err != nil {
			return err
		}
		defer ens.Stop()
		cs.Servers = ens.Servers()
	} else {
		for _, run := range last.runs {
			if err := run.Spec.ValidateEnsemble(len(cs.Servers), false); err != nil {
				return scenarioErr(err)
			}
		}
	}
	opts := loadgen.Options{Servers: cs.Servers, Chroot: cs.Chroot, SessionOptions: g.sessionOptions(), TLS: g.tlsCfg, SourceAddrs: o.sourceAddrs}
	prog := newProgressLine(stderr)
	opts.Progress = prog.update
	opts.Logf = func(format string, args ...any) {
		prog.finish()
		fmt.Fprintf(stderr, format+"\n", args...)
	}
	var (
		results  []*loadgen.Result
		partial  bool
		points   = map[string][]scalemodel.Point{}
		excluded = map[string][]report.ScalePoint{}
		names    []string
		recipes  = map[string]scenarios.Recipe{}
	)
	for i, p := range plans {
		rs, part, err := runAll(ctx, p, opts, func(_ int, run scenarios.Run) {
			prog.finish()
			fmt.Fprintf(stderr, "sweep %d of %d: %s with %d clients\n", i+1, len(plans), run.Name, run.Clients)
		})
		prog.finish()
		if err != nil {
			return err
		}
		for _, r := range rs {
			name := r.Run.Name
			if _, ok := recipes[name]; !ok {
				names = append(names, name)
				recipes[name] = r.Run.Recipe
			}
			why := ""
			switch {
			case r.Partial:
				why = "the run was stopped early"
			case r.Ops < minSweepOps:
				why = fmt.Sprintf("only %d operations in the %v window; run longer (--duration)", r.Ops, r.Run.Duration)
			case sweepShape(r.Run.Recipe) == scalemodel.Constant && r.Ops < int64(r.Run.Clients):
				// The window then measures every client's first enqueue
				// (a create and a listing each, paid once) more than the
				// recipe's steady state.
				why = fmt.Sprintf("%d operations for %d clients: the window measures the clients' first enqueue more than the steady state; run longer (--duration)", r.Ops, r.Run.Clients)
			}
			switch {
			case why != "":
				excluded[name] = append(excluded[name], report.ScalePoint{Clients: r.Run.Clients, Measured: true,
					ThroughputPerS: r.Throughput, PacketsPerAcquisition: r.Herd.ServerPacketsPerAcquisition,
					ModelThroughputPerS: -1, ModelPacketsPerAcquisition: -1, Excluded: why})
			default:
				points[name] = append(points[name], scalemodel.Point{Clients: r.Run.Clients, Throughput: r.Throughput,
					PacketsPerAcquisition: r.Herd.ServerPacketsPerAcquisition})
			}
			r.Run.Name = fmt.Sprintf("%s@%d", name, r.Run.Clients)
			results = append(results, r)
		}
		if part {
			partial = true
			break
		}
	}
	if len(results) == 0 {
		return ctx.Err()
	}
	sm := &report.ScaleModel{}
	for _, name := range names {
		shape := sweepShape(recipes[name])
		m, err := scalemodel.Fit(points[name], shape)
		if err != nil {
			fmt.Fprintf(stderr, "no scale model for %s: %v\n", name, err)
			continue
		}
		sr := scaleRecipe(name, recipes[name], shape, m, points[name])
		sr.Points = append(sr.Points, excluded[name]...)
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
	last.title = fmt.Sprintf("%s sweep, %s clients", last.spec.Name, joinInts(counts))
	rep := buildReport(last, cs.String(), local, results, partial)
	rep.ScaleModel = sm
	if err := report.WriteSummary(stdout, rep); err != nil {
		return err
	}
	if last.out != "" {
		if err := report.WriteDir(last.out, rep); err != nil {
			return usageErr("%v", err)
		}
		fmt.Fprintf(stdout, "\nreport: %s\n", filepath.Join(last.out, "report.html"))
	}
	return exitFor(rep)
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
