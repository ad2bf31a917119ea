package scenarios

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestParseThreshold(t *testing.T) {
	tests := []struct {
		expr                 string
		scenario, metric, op string
		value                float64
	}{
		{"acquire.p99<500ms", "", "acquire.p99", "<", 500},
		{"throughput>300", "", "throughput", ">", 300},
		{" fair:acquire.p99.9 <= 2s ", "fair", "acquire.p99.9", "<=", 2000},
		{"errors<=0", "", "errors", "<=", 0},
		{"error_rate<0.01", "", "error_rate", "<", 0.01},
		{"queue_wait.max>=800us", "", "queue_wait.max", ">=", 0.8},
		{"wakeups_per_release<2", "", "wakeups_per_release", "<", 2},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			got, err := ParseThreshold(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			if got.Scenario != tt.scenario || got.Metric != tt.metric || got.Op != tt.op || got.Value != tt.value {
				t.Errorf("got %+v, want %s %s %s %v", got, tt.scenario, tt.metric, tt.op, tt.value)
			}
		})
	}
	for _, bad := range []string{"", "acquire.p99", "acquire.p99<500", "acquire.p98<1s", "throughput>fast",
		"Acquire.p99<1s", ":throughput>1", "throughput=5", "acquire.p99<-1s", "wakeups_per_release<1ms"} {
		t.Run("bad "+bad, func(t *testing.T) {
			if _, err := ParseThreshold(bad); !errors.Is(err, ErrThreshold) {
				t.Errorf("got %v, want ErrThreshold", err)
			}
		})
	}
}

func TestThresholdHolds(t *testing.T) {
	lt, _ := ParseThreshold("acquire.p99<500ms")
	ge, _ := ParseThreshold("throughput>=300")
	tests := []struct {
		th    Threshold
		value float64
		want  bool
	}{
		{lt, 499.9, true}, {lt, 500, false}, {ge, 300, true}, {ge, 299.9, false},
	}
	for _, tt := range tests {
		if got := tt.th.Holds(tt.value); got != tt.want {
			t.Errorf("%s with %v: got %v, want %v", tt.th, tt.value, got, tt.want)
		}
	}
}

// Thresholds from YAML reach the runs they apply to; a step's own only
// that step; a name no run has is a mistake with its line.
func TestThresholdsInYAML(t *testing.T) {
	s, err := Parse("t.yaml", []byte(`name: t
clients: 10
compare:
  - {name: herd, recipe: herd-lock}
  - {name: fair, recipe: fair-lock, thresholds: ["acquire.p99<1s"]}
thresholds: ["fair:throughput>5", "errors<=0"]
`))
	if err != nil {
		t.Fatal(err)
	}
	runs := s.Runs()
	if got := len(runs[0].Thresholds); got != 1 {
		t.Errorf("herd: got %d thresholds, want 1 (errors)", got)
	}
	if got := len(runs[1].Thresholds); got != 3 {
		t.Errorf("fair: got %d thresholds, want 3", got)
	}
	_, err = Parse("t.yaml", []byte("name: t\nrecipe: fair-lock\nthresholds:\n  - nosuch:throughput>5\n  - acquire.p99<fast\n"))
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 2 || list[0].Pos.Line != 4 || list[1].Pos.Line != 5 {
		t.Errorf("got %v, want two mistakes on lines 4 and 5", err)
	}
}

func TestWithArrival(t *testing.T) {
	closed := Spec{Arrival: Arrival{Kind: Closed, ThinkTime: 5 * time.Millisecond}}
	poisson := Spec{Arrival: Arrival{Kind: Poisson, Rate: 400}}
	tests := []struct {
		name string
		in   Spec
		kind ArrivalKind
		rate float64
		want Arrival
	}{
		{"rate makes a closed loop constant", closed, "", 300, Arrival{Kind: Constant, Rate: 300}},
		{"rate keeps an open kind", poisson, "", 300, Arrival{Kind: Poisson, Rate: 300}},
		{"kind keeps the scenario's rate", poisson, Constant, 0, Arrival{Kind: Constant, Rate: 400}},
		{"closed drops the rate", poisson, Closed, 0, Arrival{Kind: Closed}},
		{"stampede keeps the think time", closed, Stampede, 0, Arrival{Kind: Stampede, ThinkTime: 5 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.in.WithArrival(tt.kind, tt.rate).Arrival; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
