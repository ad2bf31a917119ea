package loadrun

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zkherd/zkherd/internal/exit"
)

func TestRequestMode(t *testing.T) {
	tests := []struct {
		name    string
		q       Request
		want    Mode
		wantErr string
	}{
		{"plain", Request{Scenario: "fair-lock"}, ModePlain, ""},
		{"sweep", Request{Sweep: "1,2", SweepGiven: true}, ModeSweep, ""},
		{"sweep and join", Request{SweepGiven: true, JoinGiven: true}, 0, "--sweep runs in one process"},
		{"join and processes", Request{JoinGiven: true, ProcessesGiven: true, JoinTimeout: time.Second}, 0, "either starts"},
		{"no join timeout", Request{ProcessesGiven: true, Processes: 2}, 0, "--join-timeout 0s"},
		{"join", Request{Join: "r1", JoinGiven: true, JoinTimeout: time.Second}, ModeJoin, ""},
		{"join with scenario", Request{Join: "r1", JoinGiven: true, JoinTimeout: time.Second, Scenario: "x"}, 0, "drop --scenario"},
		{"join with out", Request{Join: "r1", JoinGiven: true, JoinTimeout: time.Second, Out: "d"}, 0, "drop --out"},
		{"start", Request{Processes: 3, ProcessesGiven: true, JoinTimeout: time.Second}, ModeStart, ""},
		{"too many processes", Request{Processes: 65, ProcessesGiven: true, JoinTimeout: time.Second}, 0, "choose 1 to 64"},
		{"spawn", Request{Spawn: 3, SpawnGiven: true, JoinTimeout: time.Second}, ModeStart, ""},
		{"spawn 0", Request{Spawn: 0, SpawnGiven: true, JoinTimeout: time.Second}, 0, "--spawn 0: choose 1 to 64"},
		{"spawn and processes", Request{Spawn: 3, SpawnGiven: true, Processes: 3, ProcessesGiven: true, JoinTimeout: time.Second}, 0, "drop --processes"},
		{"spawn and join", Request{Spawn: 3, SpawnGiven: true, Join: "r1", JoinGiven: true, JoinTimeout: time.Second}, 0, "drop one of them"},
		{"spawn and sweep", Request{Spawn: 3, SpawnGiven: true, SweepGiven: true}, 0, "--sweep runs in one process"},
		{"hosts", Request{Hosts: []string{"a", "b"}, HostsGiven: true, JoinTimeout: time.Second}, ModeStart, ""},
		{"hosts and spawn", Request{Hosts: []string{"a"}, HostsGiven: true, Spawn: 2, SpawnGiven: true, JoinTimeout: time.Second}, 0, "choose one"},
		{"hosts empty", Request{HostsGiven: true, JoinTimeout: time.Second}, 0, "--hosts: name 1 to 63 hosts"},
		{"hosts option", Request{Hosts: []string{"-oProxyCommand=x"}, HostsGiven: true, JoinTimeout: time.Second}, 0, "not a host name"},
		{"ssh option alone", Request{SSHOptions: []string{"Port=2"}}, 0, "--ssh-option goes with --hosts"},
		{"index 0 starts", Request{Index: 0, IndexGiven: true, Processes: 3, ProcessesGiven: true, RunID: "j1", JoinTimeout: time.Second, Scenario: "x"}, ModeStart, ""},
		{"index 2 joins", Request{Index: 2, IndexGiven: true, Processes: 3, ProcessesGiven: true, RunID: "j1", JoinTimeout: time.Second, Scenario: "x", Out: "/r"}, ModeJoin, ""},
		{"index too high", Request{Index: 3, IndexGiven: true, Processes: 3, ProcessesGiven: true, RunID: "j1", JoinTimeout: time.Second}, 0, "--index 3: choose 0 (starts the run) to 2"},
		{"index without run id", Request{Index: 1, IndexGiven: true, Processes: 3, ProcessesGiven: true, JoinTimeout: time.Second}, 0, "--index needs --processes and --run-id"},
		{"index with spawn", Request{Index: 1, IndexGiven: true, Spawn: 3, SpawnGiven: true, RunID: "j1", JoinTimeout: time.Second}, 0, "drop --join, --spawn and --hosts"},
		{"spawn without join timeout", Request{Spawn: 3, SpawnGiven: true}, 0, "--join-timeout 0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.q.Mode()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(asFlags(err), tt.wantErr) {
					t.Fatalf("Mode() error = %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Mode() = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestRequestOverrides(t *testing.T) {
	q := Request{Scenario: "fair-lock", Clients: 7, ClientsGiven: true, Duration: time.Second, Thresholds: []string{"acquire.p99<5ms"}}
	ov, err := q.Overrides()
	if err != nil {
		t.Fatal(err)
	}
	if ov.Clients != 7 || ov.Duration != 0 || len(ov.Thresholds) != 1 {
		t.Errorf("Overrides() = %+v, want 7 clients, the scenario's duration (not given), one threshold", ov)
	}
	q.Thresholds = []string{"x<1"}
	if _, err := q.Overrides(); err == nil || !strings.HasPrefix(asFlags(err), `--threshold "x<1": unknown metric`) {
		t.Errorf("Overrides() with a bad threshold: error %v, want it to start --threshold \"x<1\": unknown metric", err)
	}
}

// TestDoChecksBeforeTheRunner: Prepare reports a mistake in the request
// or the scenario before the command makes the runner (whose mistakes
// are the servers'), and a join needs servers.
func TestDoChecksBeforeTheRunner(t *testing.T) {
	tests := []struct {
		name    string
		q       Request
		wantErr string
		runner  bool // whether Prepare makes a job
	}{
		{"unknown scenario", Request{Scenario: "no-such-scenario"}, "no-such-scenario", false},
		{"bad clients", Request{Scenario: "fair-lock", ClientsGiven: true}, "--clients 0", false},
		{"sweep with clients", Request{Scenario: "fair-lock", Sweep: "2,4", SweepGiven: true, Clients: 3, ClientsGiven: true}, "drop --clients", false},
		{"join without servers", Request{Join: "r1", JoinGiven: true, JoinTimeout: time.Second}, "--join needs --server", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job, err := Prepare(&tt.q)
			if made := err == nil; made != tt.runner {
				t.Fatalf("Prepare() error = %v; want a job: %v", err, tt.runner)
			}
			if err == nil {
				err = (&Runner{}).Do(context.Background(), job)
			}
			if err == nil || !strings.Contains(asFlags(err), tt.wantErr) {
				t.Fatalf("error = %v, want one saying %q", err, tt.wantErr)
			}
		})
	}
}

// asFlags is err as zkherd load shows it: the values it names as flags.
func asFlags(err error) string {
	return exit.Text(err, func(input string) string { return "--" + input })
}

// TestErrorsNameNoFlag: the library's errors name the values at fault,
// never a flag (the command names them its way); as zkherd load shows
// them, each value is its flag and the message is the one users read.
func TestErrorsNameNoFlag(t *testing.T) {
	tests := []struct {
		name string
		q    Request
		want string // as zkherd load shows it
	}{
		{"clients", Request{Scenario: "fair-lock", Clients: -2, ClientsGiven: true}, "--clients -2: must be at least 1"},
		{"two bounds", Request{Scenario: "fair-lock", Duration: time.Second, DurationGiven: true, Ops: 5, OpsGiven: true},
			"--duration and --ops: give one bound, not both"},
		{"sweep with clients", Request{Scenario: "fair-lock", Sweep: "2,4", SweepGiven: true, Clients: 3, ClientsGiven: true},
			"--sweep sets the clients of each run; drop --clients"},
		{"bad sweep", Request{Scenario: "fair-lock", Sweep: "2,x", SweepGiven: true}, `--sweep 2,x: "x" is not a client count`},
		{"threshold", Request{Scenario: "fair-lock", Thresholds: []string{"x<1"}}, `--threshold "x<1": unknown metric`},
		{"session timeout", Request{Scenario: "fair-lock", SessionTimeout: time.Millisecond, SessionTimeoutGiven: true},
			"--session-timeout 1ms: choose between 1s and 10m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Prepare(&tt.q)
			if err == nil {
				t.Fatal("Prepare: no error")
			}
			if strings.Contains(err.Error(), "--") {
				t.Errorf("error %q names a flag", err)
			}
			if got := asFlags(err); !strings.HasPrefix(got, tt.want) {
				t.Errorf("shown as %q, want it to start %q", got, tt.want)
			}
			if code := exit.Code(err, false); code != exit.Usage {
				t.Errorf("exit status %d, want %d (bad input)", code, exit.Usage)
			}
		})
	}
}
