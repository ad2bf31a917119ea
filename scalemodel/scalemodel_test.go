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
	// A herd lock: one notification and one failed create (each a request
	// and a reply) per waiter, and server time per acquisition growing
	// with them; a fair lock: a constant of both.
	herd := []Point{
		{Clients: 100, Throughput: 1 / (0.001 + 0.00002*100), PacketsPerAcquisition: 10 + 3*100},
		{Clients: 500, Throughput: 1 / (0.001 + 0.00002*500), PacketsPerAcquisition: 10 + 3*500},
		{Clients: 1000, Throughput: 1 / (0.001 + 0.00002*1000), PacketsPerAcquisition: 10 + 3*1000},
		{Clients: 2000, Throughput: 1 / (0.001 + 0.00002*2000), PacketsPerAcquisition: 10 + 3*2000},
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
		{"herd at 10,000", herd, Linear, 10_000, 1 / (0.001 + 0.00002*10_000), 10 + 3*10_000, 1e-6},
		{"herd at 100,000", herd, Linear, 100_000, 1 / (0.001 + 0.00002*100_000), 10 + 3*100_000, 1e-6},
		{"fair at 100,000 stays flat", fair, Constant, 100_000, 800, 9.03, 0.01},
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

func TestPredictBeyondTheModel(t *testing.T) {
	// Throughput rising with clients: the inverse line falls below zero.
	m, err := Fit([]Point{{100, 100, 1}, {200, 1000, 1}}, Linear)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Predict(100_000).Throughput; got != 0 {
		t.Errorf("Predict(100000).Throughput = %v, want 0 where the model does not hold", got)
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		name                 string
		m                    Model
		wantPackets, wantInv string
	}{
		{"linear", Model{Packets: Line{Intercept: 10, Slope: 3, R2: 1, N: 4}, InverseThroughput: Line{Intercept: 0.001, Slope: -0.00002, R2: 0.5, N: 4}},
			"packets/acq = 10 + 3*N (R² 1.00, 4 points)", "1/throughput = 0.001 - 2e-05*N s (R² 0.50, 4 points)"},
		{"constant", Model{Packets: Line{Shape: Constant, Intercept: 9, N: 3, MinY: 8.5, MaxY: 9.5}, InverseThroughput: Line{Shape: Constant, Intercept: 0.00125, N: 3, MinY: 0.0012, MaxY: 0.0013}},
			"packets/acq = 9 (constant: mean of 3 points, 8.5..9.5)", "1/throughput = 0.00125 s (constant: mean of 3 points, 0.0012..0.0013)"},
		{"no counters", Model{InverseThroughput: Line{Shape: Constant, Intercept: 1, N: 1, MinY: 1, MaxY: 1}},
			"no server counters", "1/throughput = 1 s (constant: mean of 1 points, 1..1)"},
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
