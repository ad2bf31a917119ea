package scalemodel

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// ErrTooFewPoints is returned by Fit without two distinct client counts.
var ErrTooFewPoints = errors.New("scalemodel: need measurements at two client counts or more")

// Point is one measured run.
type Point struct {
	Clients int
	// Throughput is acquisitions per second.
	Throughput float64
	// PacketsPerAcquisition is server packets (received plus sent, every
	// member) per acquisition; negative when unknown.
	PacketsPerAcquisition float64
}

// Shape is the form of a fitted line.
type Shape int

const (
	// Linear fits y = a + b*x.
	Linear Shape = iota
	// Constant fits y = a (the mean): b is 0.
	Constant
)

func (s Shape) String() string {
	if s == Constant {
		return "constant"
	}
	return "linear"
}

// Line is y = Intercept + Slope*x, with its coefficient of determination.
type Line struct {
	Shape            Shape
	Intercept, Slope float64
	// R2 is 1 for a perfect fit (and when every y is the same); for a
	// constant it is 0 unless every y is the same.
	R2 float64
	// N is the number of points fitted; MinY and MaxY bound their values.
	N          int
	MinY, MaxY float64
}

// At returns the line's value at x.
func (l Line) At(x float64) float64 { return l.Intercept + l.Slope*x }

// FitLine fits y = a + b*x by ordinary least squares. It needs two
// distinct x values.
func FitLine(xs, ys []float64) (Line, error) {
	if len(xs) != len(ys) {
		return Line{}, fmt.Errorf("scalemodel: %d x values for %d y values", len(xs), len(ys))
	}
	n := float64(len(xs))
	if len(xs) < 2 || slices.Min(xs) == slices.Max(xs) {
		return Line{}, ErrTooFewPoints
	}
	var sx, sy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
	}
	mx, my := sx/n, sy/n
	var sxx, sxy, syy float64
	for i := range xs {
		dx, dy := xs[i]-mx, ys[i]-my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	b := sxy / sxx
	l := Line{Intercept: my - b*mx, Slope: b, R2: 1, N: len(xs), MinY: slices.Min(ys), MaxY: slices.Max(ys)}
	if syy > 0 {
		var sse float64
		for i := range xs {
			r := ys[i] - l.At(xs[i])
			sse += r * r
		}
		l.R2 = 1 - sse/syy
	}
	return l, nil
}

// FitConstant fits y = a by least squares: a is the mean. It needs one
// point or more.
func FitConstant(ys []float64) (Line, error) {
	if len(ys) == 0 {
		return Line{}, ErrTooFewPoints
	}
	var sum float64
	for _, y := range ys {
		sum += y
	}
	l := Line{Shape: Constant, Intercept: sum / float64(len(ys)), N: len(ys), MinY: slices.Min(ys), MaxY: slices.Max(ys)}
	if l.MinY == l.MaxY {
		l.R2 = 1
	}
	return l, nil
}

func fit(shape Shape, xs, ys []float64) (Line, error) {
	if shape == Constant {
		return FitConstant(ys)
	}
	return FitLine(xs, ys)
}

// Model is a recipe's fitted scale model.
type Model struct {
	// Packets is server packets per acquisition against clients; its
	// N is 0 when no point had server counters.
	Packets Line
	// LogThroughput is the logarithm of throughput against the logarithm
	// of clients: throughput = exp(Intercept) * clients^Slope, a power law
	// (Slope about -1 when each acquisition's cost grows with the
	// waiters). A Constant shape has Slope 0: the geometric mean.
	LogThroughput Line
}

// Fit fits a model of the given shape (Linear for the herd locks, whose
// cost grows with the waiters; Constant for the fair lock) to the
// measured points: packets per acquisition against clients, and
// throughput against clients on log-log scales (least squares on the
// logarithms, so that every client count weighs the same). Points without
// throughput are ignored; points without packets count only for
// throughput. A linear fit needs two client counts or more.
func Fit(points []Point, shape Shape) (Model, error) {
	var cx, inv, px, pk []float64
	for _, p := range points {
		if p.Clients <= 0 || p.Throughput <= 0 || math.IsNaN(p.Throughput) || math.IsInf(p.Throughput, 0) {
			continue
		}
		cx = append(cx, math.Log(float64(p.Clients)))
		inv = append(inv, math.Log(p.Throughput))
		if p.PacketsPerAcquisition >= 0 {
			px = append(px, float64(p.Clients))
			pk = append(pk, p.PacketsPerAcquisition)
		}
	}
	var m Model
	var err error
	if m.LogThroughput, err = fit(shape, cx, inv); err != nil {
		return Model{}, err
	}
	if len(px) > 0 {
		if m.Packets, err = fit(shape, px, pk); err != nil {
			m.Packets = Line{}
		}
	}
	return m, nil
}

// Prediction is the model's figures at a client count.
type Prediction struct {
	Clients    int
	Throughput float64
	// PacketsPerAcquisition is negative when the model has no packets fit.
	PacketsPerAcquisition float64
}

// Predict evaluates the model at clients. Packets per acquisition below
// zero (a line that falls below zero) are reported as 0.
func (m Model) Predict(clients int) Prediction {
	p := Prediction{Clients: clients, PacketsPerAcquisition: -1}
	if m.LogThroughput.N > 0 && clients > 0 {
		p.Throughput = math.Exp(m.LogThroughput.At(math.Log(float64(clients))))
	}
	if m.Packets.N > 0 {
		p.PacketsPerAcquisition = max(0, m.Packets.At(float64(clients)))
	}
	return p
}

// DefaultTargets are the client counts predictions are made for.
var DefaultTargets = []int{10_000, 20_000, 50_000, 100_000}

// Describe writes the model's two lines as formulas, N the clients.
func (m Model) Describe() (packets, throughput string) {
	packets = "no server counters"
	if m.Packets.N > 0 {
		packets = "packets/acq = " + m.Packets.formula("")
	}
	l := m.LogThroughput
	if l.Shape == Constant {
		throughput = fmt.Sprintf("throughput = %.3g/s (constant: geometric mean of %d points, %.3g..%.3g)",
			math.Exp(l.Intercept), l.N, math.Exp(l.MinY), math.Exp(l.MaxY))
	} else {
		throughput = fmt.Sprintf("throughput = %.3g*N^%.3g /s (R² %.2f on log-log scales, %d points)", math.Exp(l.Intercept), l.Slope, l.R2, l.N)
	}
	return packets, throughput
}

func (l Line) formula(unit string) string {
	if l.Shape == Constant {
		return fmt.Sprintf("%.3g%s (constant: mean of %d points, %.3g..%.3g)", l.Intercept, unit, l.N, l.MinY, l.MaxY)
	}
	return fmt.Sprintf("%.3g %s %.3g*N%s (R² %.2f, %d points)", l.Intercept, sign(l.Slope), math.Abs(l.Slope), unit, l.R2, l.N)
}

func sign(v float64) string {
	if v < 0 {
		return "-"
	}
	return "+"
}
