package scalemodel

import (
	"errors"
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

func TestFitLine(t *testing.T) {
	tests := []struct {
		name         string
		xs, ys       []float64
		wantA, wantB float64
		wantR2       float64
		wantErr      error
	}{
		{name: "exact line", xs: []float64{1, 2, 3}, ys: []float64{5, 7, 9}, wantA: 3, wantB: 2, wantR2: 1},
		{name: "flat", xs: []float64{100, 1000, 5000}, ys: []float64{6, 6, 6}, wantA: 6, wantB: 0, wantR2: 1},
		{name: "noisy", xs: []float64{0, 1, 2, 3}, ys: []float64{1, 3, 2, 4}, wantA: 1.3, wantB: 0.8, wantR2: 0.64},
		{name: "one point", xs: []float64{100}, ys: []float64{3}, wantErr: ErrTooFewPoints},
		{name: "same x", xs: []float64{100, 100}, ys: []float64{3, 4}, wantErr: ErrTooFewPoints},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FitLine(tt.xs, tt.ys)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("FitLine error = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("FitLine: %v", err)
			}
			if !near(got.Intercept, tt.wantA, 1e-9) || !near(got.Slope, tt.wantB, 1e-9) || !near(got.R2, tt.wantR2, 1e-9) {
				t.Errorf("FitLine = %+v, want intercept %v slope %v R² %v", got, tt.wantA, tt.wantB, tt.wantR2)
			}
		})
	}
}

func TestFitAndPredict(t *testing.T) {
	// A herd lock: about three packets per waiter per acquisition, and
	// throughput falling as a power of the clients; a fair lock: a
	// constant of both.
	herdT := func(n float64) float64 { return 2000 * math.Pow(n, -0.9) }
	herd := []Point{
		{Clients: 100, Throughput: herdT(100), PacketsPerAcquisition: 10 + 3*100},
		{Clients: 500, Throughput: herdT(500), PacketsPerAcquisition: 10 + 3*500},
		{Clients: 1000, Throughput: herdT(1000), PacketsPerAcquisition: 10 + 3*1000},
		{Clients: 5000, Throughput: herdT(5000), PacketsPerAcquisition: 10 + 3*5000},
	}
	fair := []Point{
		{Clients: 100, Throughput: 800, PacketsPerAcquisition: 9},
		{Clients: 1000, Throughput: 810, PacketsPerAcquisition: 9.2},
		{Clients: 5000, Throughput: 790, PacketsPerAcquisition: 8.9},
	}
	tests := []struct {
		name           string
		points         []Point
		shape          Shape
		at             int
		wantThroughput float64
		wantPackets    float64
		tolerance      float64
	}{
		{"herd at 10,000", herd, Linear, 10_000, herdT(10_000), 10 + 3*10_000, 1e-9},
		{"herd at 100,000", herd, Linear, 100_000, herdT(100_000), 10 + 3*100_000, 1e-9},
		{"fair at 100,000 stays flat", fair, Constant, 100_000, math.Cbrt(800 * 810 * 790), 9.03, 0.01},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Fit(tt.points, tt.shape)
			if err != nil {
				t.Fatalf("Fit: %v", err)
			}
			got := m.Predict(tt.at)
			if !near(got.Throughput, tt.wantThroughput, tt.tolerance) || !near(got.PacketsPerAcquisition, tt.wantPackets, tt.tolerance) {
				t.Errorf("Predict(%d) = %+v, want throughput %.4g, packets %.4g", tt.at, got, tt.wantThroughput, tt.wantPackets)
			}
		})
	}
}

func TestFitSkipsUnknown(t *testing.T) {
	tests := []struct {
		name        string
		points      []Point
		shape       Shape
		wantErr     error
		wantPackets int // points in the packets fit
	}{
		{"no packets", []Point{{100, 10, -1}, {200, 5, -1}}, Linear, nil, 0},
		{"one packet point", []Point{{100, 10, 3}, {200, 5, -1}}, Linear, nil, 0},
		{"one packet point, constant", []Point{{100, 10, 3}, {200, 5, -1}}, Constant, nil, 1},
		{"zero throughput dropped", []Point{{100, 0, 3}, {200, 5, 4}}, Linear, ErrTooFewPoints, 0},
		{"constant from one point", []Point{{100, 0, 3}, {200, 5, 4}}, Constant, nil, 1},
		{"no points", nil, Constant, ErrTooFewPoints, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Fit(tt.points, tt.shape)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Fit error = %v, want %v", err, tt.wantErr)
			}
			if err == nil && m.Packets.N != tt.wantPackets {
				t.Errorf("packets fit over %d points, want %d", m.Packets.N, tt.wantPackets)
			}
			if err == nil && tt.wantPackets == 0 && m.Predict(1000).PacketsPerAcquisition != -1 {
				t.Errorf("Predict without a packets fit gives packets %v, want -1", m.Predict(1000).PacketsPerAcquisition)
			}
		})
	}
}

func TestPredictClampsPackets(t *testing.T) {
	// Packets falling with clients: the line crosses zero.
	m, err := Fit([]Point{{100, 100, 50}, {200, 100, 10}}, Linear)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Predict(100_000).PacketsPerAcquisition; got != 0 {
		t.Errorf("Predict(100000).PacketsPerAcquisition = %v, want 0 where the line falls below zero", got)
	}
	if got := m.Predict(100_000).Throughput; !near(got, 100, 1e-9) {
		t.Errorf("Predict(100000).Throughput = %v, want 100 (flat)", got)
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		name                 string
		m                    Model
		wantPackets, wantInv string
	}{
		{"linear", Model{Packets: Line{Intercept: 10, Slope: 3, R2: 1, N: 4}, LogThroughput: Line{Intercept: math.Log(2000), Slope: -0.9, R2: 0.5, N: 4}},
			"packets/acq = 10 + 3*N (R² 1.00, 4 points)", "throughput = 2e+03*N^-0.9 /s (R² 0.50 on log-log scales, 4 points)"},
		{"constant", Model{Packets: Line{Shape: Constant, Intercept: 9, N: 3, MinY: 8.5, MaxY: 9.5}, LogThroughput: Line{Shape: Constant, Intercept: math.Log(800), N: 3, MinY: math.Log(790), MaxY: math.Log(810)}},
			"packets/acq = 9 (constant: mean of 3 points, 8.5..9.5)", "throughput = 800/s (constant: geometric mean of 3 points, 790..810)"},
		{"no counters", Model{LogThroughput: Line{Shape: Constant, Intercept: 0, N: 1}},
			"no server counters", "throughput = 1/s (constant: geometric mean of 1 points, 1..1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, inv := tt.m.Describe()
			if p != tt.wantPackets || inv != tt.wantInv {
				t.Errorf("Describe() = %q, %q; want %q, %q", p, inv, tt.wantPackets, tt.wantInv)
			}
		})
	}
}
