package scenarios

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestEffectiveDefaults(t *testing.T) {
	s := Spec{Name: "x", Recipe: FairLock}
	e := s.Effective()
	want := Spec{
		Name: "x", Recipe: FairLock, Clients: DefaultClients, Locks: DefaultLocks, Duration: DefaultDuration,
		Arrival: Arrival{Kind: DefaultArrival}, RampUp: DefaultRampUp, Hold: FixedHold(DefaultHold),
		SessionTimeout: DefaultSessionTimeout, Ensemble: DefaultEnsemble, Seed: DefaultSeed,
	}
	if !reflect.DeepEqual(e, want) {
		t.Errorf("Effective() =\n%#v\nwant\n%#v", e, want)
	}
}

func TestEffectiveLeavesCallerAlone(t *testing.T) {
	s := Spec{
		Name: "x", Recipe: Semaphore,
		Params: Params{Semaphore: &SemaphoreParams{}},
		Faults: []Fault{{At: time.Second, Kind: KillLeader}},
	}
	e := s.Effective()
	if s.Clients != 0 || s.Semaphore.Leases != 0 || s.Faults[0].Duration != 0 {
		t.Errorf("Effective wrote defaults back: clients %d, leases %d, fault duration %v", s.Clients, s.Semaphore.Leases, s.Faults[0].Duration)
	}
	if e.Semaphore.Leases != DefaultLeases || e.Faults[0].Duration != DefaultFaultDuration {
		t.Errorf("Effective: leases %d, fault duration %v; want %d, %v", e.Semaphore.Leases, e.Faults[0].Duration, DefaultLeases, DefaultFaultDuration)
	}
}

func TestEffectiveRecipeParams(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want Params
		// wantClients and wantOps, when set, are checked too.
		wantClients int
		wantOps     uint64
	}{
		{name: "rwlock without block", spec: Spec{Recipe: RWLock}, want: Params{RWLock: &RWLockParams{ReadRatio: DefaultReadRatio}}},
		{name: "rwlock all writes", spec: Spec{Recipe: RWLock, Params: Params{RWLock: &RWLockParams{}}}, want: Params{RWLock: &RWLockParams{}}},
		{name: "semaphore", spec: Spec{Recipe: Semaphore}, want: Params{Semaphore: &SemaphoreParams{Leases: DefaultLeases}}},
		{name: "queue halves", spec: Spec{Recipe: Queue, Clients: 9}, want: Params{Queue: &QueueParams{Producers: 4, Consumers: 5}}},
		{name: "queue one client", spec: Spec{Recipe: Queue, Clients: 1}, want: Params{Queue: &QueueParams{Producers: 1, Consumers: 0}}},
		{name: "queue consumers given", spec: Spec{Recipe: Queue, Clients: 10, Params: Params{Queue: &QueueParams{Consumers: 7}}},
			want: Params{Queue: &QueueParams{Producers: 3, Consumers: 7}}},
		{name: "queue sizes clients", spec: Spec{Recipe: Queue, Params: Params{Queue: &QueueParams{Producers: 2, Consumers: 3, Items: 50}}},
			want: Params{Queue: &QueueParams{Producers: 2, Consumers: 3, Items: 50}}, wantClients: 5, wantOps: 50},
		{name: "barrier", spec: Spec{Recipe: Barrier, Clients: 12}, want: Params{Barrier: &BarrierParams{Size: 12}}},
		{name: "lock has none", spec: Spec{Recipe: FairLock}, want: Params{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.spec.Effective()
			if !reflect.DeepEqual(e.Params, tt.want) {
				t.Errorf("Effective().Params = %+v, want %+v", e.Params, tt.want)
			}
			if tt.wantClients != 0 && e.Clients != tt.wantClients {
				t.Errorf("Effective().Clients = %d, want %d", e.Clients, tt.wantClients)
			}
			if tt.wantOps != 0 && (e.Ops != tt.wantOps || e.Duration != 0) {
				t.Errorf("Effective(): ops %d, duration %v; want ops %d and no duration", e.Ops, e.Duration, tt.wantOps)
			}
		})
	}
}

func TestRuns(t *testing.T) {
	s := Spec{
		Name: "cmp", Description: "shared", Clients: 10, Ops: 100, Hold: FixedHold(0),
		Compare: []Step{
			{Recipe: HerdLock},
			{Name: "sem", Recipe: Semaphore, Description: "own", Params: Params{Semaphore: &SemaphoreParams{Leases: 2}}},
		},
	}
	runs := s.Runs()
	if len(runs) != 2 {
		t.Fatalf("Runs() has %d runs, want 2", len(runs))
	}
	tests := []struct {
		name, desc string
		recipe     Recipe
		params     Params
	}{
		{"herd-lock", "shared", HerdLock, Params{}},
		{"sem", "own", Semaphore, Params{Semaphore: &SemaphoreParams{Leases: 2}}},
	}
	for i, tt := range tests {
		r := runs[i]
		if r.Name != tt.name || r.Description != tt.desc || r.Recipe != tt.recipe || !reflect.DeepEqual(r.Params, tt.params) {
			t.Errorf("run %d = %q %q %s %+v, want %q %q %s %+v", i, r.Name, r.Description, r.Recipe, r.Params, tt.name, tt.desc, tt.recipe, tt.params)
		}
		if r.Clients != 10 || r.Ops != 100 || r.Duration != 0 || r.Hold != FixedHold(0) || r.Compare != nil || r.Group != "cmp" || r.Step != i {
			t.Errorf("run %d shares clients %d ops %d duration %v hold %v, compare %v, group %q step %d", i, r.Clients, r.Ops, r.Duration, r.Hold, r.Compare, r.Group, r.Step)
		}
	}
	single := Spec{Name: "one", Recipe: FairLock}.Runs()
	if len(single) != 1 || single[0].Group != "" || single[0].OfSteps != 1 || single[0].Clients != DefaultClients {
		t.Errorf("Runs() of a single scenario = %+v", single)
	}
}

func TestLockFor(t *testing.T) {
	s := Spec{Locks: 3}
	var got []int
	for i := range 7 {
		got = append(got, s.LockFor(i))
	}
	if want := []int{0, 1, 2, 0, 1, 2, 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("LockFor(0..6) = %v, want %v", got, want)
	}
	if got := (Spec{}).LockFor(5); got != 0 {
		t.Errorf("LockFor with default locks = %d, want 0", got)
	}
}

// A Spec built in Go is validated too, without positions.
func TestValidateGoSpec(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want string // "" for valid
	}{
		{name: "valid", spec: Spec{Name: "ok", Recipe: FairLock}},
		{name: "no name", spec: Spec{Recipe: FairLock}, want: "name: missing; a scenario needs a name such as my-lock-test"},
		{name: "negative clients", spec: Spec{Name: "n", Recipe: FairLock, Clients: -1}, want: "clients: must be at least 1, got -1"},
		{name: "duration and ops", spec: Spec{Name: "n", Recipe: FairLock, Duration: time.Second, Ops: 1},
			want: "ops: set either duration (a time bound) or ops (an operation count), not both"},
		{name: "at and every", spec: Spec{Name: "n", Recipe: FairLock, Faults: []Fault{{At: time.Second, Every: 5 * time.Second, Kind: KillLeader}}},
			want: "faults[0].every: set either at (once) or every (repeated), not both"},
		{name: "hold without kind", spec: Spec{Name: "n", Recipe: FairLock, Hold: Distribution{Mean: time.Second}},
			want: "hold.kind: missing; one of fixed, uniform, exponential"},
		{name: "exponential cap below mean", spec: Spec{Name: "n", Recipe: FairLock, Hold: Distribution{Kind: Exponential, Mean: time.Second, Max: time.Millisecond}},
			want: "hold.max: 1ms caps the distribution below its mean (1s)"},
		{name: "expire-holder on barrier", spec: Spec{Name: "n", Recipe: Barrier, Faults: []Fault{{Kind: ExpireHolder}}},
			want: "faults[0].kind: expire-holder needs a holder, and a barrier has none; use expire-random"},
		{name: "every longer than the run", spec: Spec{Name: "n", Recipe: FairLock, Duration: time.Second, Faults: []Fault{{Every: time.Second, Kind: ExpireHolder}}},
			want: "faults[0].every: 1s is not shorter than the run (duration 1s), so the fault would never happen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.spec.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.want != "" && err == nil:
				t.Errorf("Validate() = nil, want %q", tt.want)
			case tt.want != "" && err.Error() != tt.want:
				t.Errorf("Validate() = %q, want %q", err, tt.want)
			case err != nil && !errors.Is(err, ErrInvalid):
				t.Errorf("Validate() error is not ErrInvalid: %v", err)
			}
		})
	}
}

func TestValidateEnsemble(t *testing.T) {
	src := "name: x\nrecipe: fair-lock\nensemble: 3\nfaults:\n" +
		"  - {at: 1s, kind: pause-member, member: 3}\n" +
		"  - {at: 2s, kind: cut-connections, member: 2}\n" +
		"  - {at: 3s, kind: kill-leader}\n"
	s, err := Parse("x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		members int
		local   bool
		want    string
	}{
		{name: "local 3", members: 3, local: true},
		{name: "local 1", members: 1, local: true, want: "x.yaml:5:42: faults[0].member: 3 does not exist in a 1-node ensemble (members are only 1)\n" +
			"x.yaml:6:45: faults[1].member: 2 does not exist in a 1-node ensemble (members are only 1)"},
		{name: "external 5", members: 5, local: false, want: "x.yaml:5:20: faults[0].kind: pause-member acts on server processes, which only a local ensemble started by zkherd allows (the run targets existing servers)\n" +
			"x.yaml:7:20: faults[2].kind: kill-leader acts on server processes, which only a local ensemble started by zkherd allows (the run targets existing servers)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.ValidateEnsemble(tt.members, tt.local)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("ValidateEnsemble(%d, %v) =\n%s\nwant\n%s", tt.members, tt.local, got, tt.want)
			}
		})
	}
}

func TestFaultOccurrence(t *testing.T) {
	tests := []struct {
		name  string
		fault Fault
		n     int
		want  time.Duration
		ok    bool
	}{
		{"once first", Fault{At: 3 * time.Second}, 0, 3 * time.Second, true},
		{"once at start", Fault{}, 0, 0, true},
		{"once second", Fault{At: 3 * time.Second}, 1, 0, false},
		{"every first", Fault{Every: 2 * time.Second}, 0, 2 * time.Second, true},
		{"every fourth", Fault{Every: 2 * time.Second}, 3, 8 * time.Second, true},
		{"negative", Fault{Every: time.Second}, -1, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.fault.Occurrence(tt.n)
			if got != tt.want || ok != tt.ok {
				t.Errorf("Occurrence(%d) = %v, %v; want %v, %v", tt.n, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestRampUpFor: the default ramp-up opens any count in at most
// DefaultRampTime, never slower than DefaultRampUp nor faster than
// MaxDefaultRampUp; a scenario's own rate stands.
func TestRampUpFor(t *testing.T) {
	tests := []struct {
		clients int
		want    float64
	}{{50, 200}, {2000, 200}, {5000, 500}, {10_000, 1000}, {1_000_000, 2000}}
	for _, tt := range tests {
		if got := RampUpFor(tt.clients); got != tt.want {
			t.Errorf("RampUpFor(%d) = %v, want %v", tt.clients, got, tt.want)
		}
	}
	s := Spec{Name: "x", Recipe: FairLock, Clients: 10_000}
	if got := s.Effective().RampUp; got != 1000 {
		t.Errorf("10,000 clients, no ramp_up: %v/s, want 1000/s", got)
	}
	s.RampUp = 50
	if got := s.Effective().RampUp; got != 50 {
		t.Errorf("ramp_up 50: %v/s, want the scenario's 50", got)
	}
}
