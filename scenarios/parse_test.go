package scenarios

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkherd/zkherd/internal/golden"
)

// TestParseErrors loads every testdata/TestParseErrors/<case>.yaml and
// compares the error text with <case>.golden.
func TestParseErrors(t *testing.T) {
	files, err := filepath.Glob("testdata/TestParseErrors/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no test files")
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			_, err := Load(file)
			if err == nil {
				t.Fatalf("Load(%s) = nil error, want one", file)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("errors.Is(err, ErrInvalid) = false for %v", err)
			}
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Errorf("error %T is not a non-empty ErrorList", err)
			}
			got := err.Error() + "\n"
			golden.File(t, strings.TrimSuffix(file, ".yaml")+".golden", []byte(got))
		})
	}
}

// TestParseErrorText pins the exact wording of the messages users see most.
func TestParseErrorText(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{
			name: "enum",
			src:  "name: x\nrecipe: fair-lock\nclients: 10\nduration: 5s\n\narrival:\n  kind:    burst\n",
			want: `scn.yaml:7:12: arrival.kind: "burst" is not one of stampede, constant, poisson, closed`,
		},
		{
			name: "enum typo",
			src:  "name: x\nrecipe: fair-lock\narrival: stampeed\n",
			want: `scn.yaml:3:10: arrival.kind: "stampeed" is not one of stampede, constant, poisson, closed (did you mean "stampede"?)`,
		},
		{
			name: "duration in words",
			src:  "name: x\nrecipe: fair-lock\nduration: 3 seconds\n",
			want: `scn.yaml:3:11: duration: "3 seconds" is not a duration; use Go duration syntax like 3s, 500ms or 1m30s`,
		},
		{
			name: "duration without unit",
			src:  "name: x\nrecipe: fair-lock\nduration: 3\n",
			want: `scn.yaml:3:11: duration: 3 has no unit; use Go duration syntax like 3s, 500ms or 1m30s`,
		},
		{
			name: "zero clients",
			src:  "name: x\nrecipe: fair-lock\nclients: 0\n",
			want: `scn.yaml:3:10: clients: must be at least 1, got 0`,
		},
		{
			name: "negative clients",
			src:  "name: x\nrecipe: fair-lock\nclients: -1\n",
			want: `scn.yaml:3:10: clients: must be at least 1, got -1`,
		},
		{
			name: "unknown field",
			src:  "name: x\nrecipe: fair-lock\nclient: 5\n",
			want: `scn.yaml:3:1: client: unknown field; did you mean "clients"?`,
		},
		{
			name: "unknown field far from any",
			src:  "name: x\nrecipe: fair-lock\narrival:\n  speed: 5\n  kind: closed\n",
			want: `scn.yaml:4:3: arrival.speed: unknown field; allowed here: kind, rate, think_time, stages`,
		},
		{
			name: "both duration and ops",
			src:  "name: x\nrecipe: fair-lock\nduration: 1s\nops: 10\n",
			want: `scn.yaml:4:6: ops: set either duration (a time bound) or ops (an operation count), not both`,
		},
		{
			name: "member beyond ensemble",
			src:  "name: x\nrecipe: fair-lock\nensemble: 3\nfaults:\n  - {at: 1s, kind: kill-member, member: 4}\n",
			want: `scn.yaml:5:41: faults[0].member: 4 does not exist in a 3-node ensemble (members are 1..3)`,
		},
		{
			name: "several at once",
			src:  "name: x\nrecipe: fair-lock\nclients: 0\nlocks: 0\n",
			want: "scn.yaml:3:10: clients: must be at least 1, got 0\nscn.yaml:4:8: locks: must be at least 1, got 0",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("scn.yaml", []byte(tt.src))
			if err == nil {
				t.Fatalf("Parse = nil error, want %q", tt.want)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Parse error:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want Spec
	}{
		{
			name: "minimal, name from file",
			src:  "recipe: fair-lock\n",
			want: Spec{Name: "scn", Recipe: FairLock},
		},
		{
			name: "shorthands",
			src: "name: s\nrecipe: herd-lock\nclients: 1_000\nops: 5000\narrival: stampede\nhold: 0s\n" +
				"ramp_up: 12.5\nseed: 7\nsession_timeout: 4s\n",
			want: Spec{Name: "s", Recipe: HerdLock, Clients: 1000, Ops: 5000, Arrival: Arrival{Kind: Stampede},
				Hold: FixedHold(0), RampUp: 12.5, Seed: 7, SessionTimeout: 4 * time.Second},
		},
		{
			name: "full forms",
			src: "name: f\ndescription: |\n  Two lines\n  of text.\nrecipe: semaphore\nclients: 20\nlocks: 2\nduration: 1m30s\n" +
				"arrival: {kind: poisson, rate: 250}\nhold: {kind: exponential, mean: 2ms, max: 20ms}\nsemaphore: {leases: 3}\n",
			want: Spec{Name: "f", Description: "Two lines\nof text.", Recipe: Semaphore, Clients: 20, Locks: 2,
				Duration: 90 * time.Second, Arrival: Arrival{Kind: Poisson, Rate: 250},
				Hold:   Distribution{Kind: Exponential, Mean: 2 * time.Millisecond, Max: 20 * time.Millisecond},
				Params: Params{Semaphore: &SemaphoreParams{Leases: 3}}},
		},
		{
			name: "bare zero is a duration",
			src:  "name: z\nrecipe: fair-lock\nhold: 0\narrival: {kind: closed, think_time: 0}\n",
			want: Spec{Name: "z", Recipe: FairLock, Hold: FixedHold(0), Arrival: Arrival{Kind: Closed}},
		},
		{
			name: "rwlock block without ratio reads with the default",
			src:  "name: r\nrecipe: rwlock\nrwlock: {}\n",
			want: Spec{Name: "r", Recipe: RWLock, Params: Params{RWLock: &RWLockParams{ReadRatio: DefaultReadRatio}}},
		},
		{
			name: "rwlock with no reads",
			src:  "name: r\nrecipe: rwlock\nrwlock: {read_ratio: 0}\n",
			want: Spec{Name: "r", Recipe: RWLock, Params: Params{RWLock: &RWLockParams{ReadRatio: 0}}},
		},
		{
			name: "faults",
			src: "name: c\nrecipe: fair-lock\nensemble: 3\nfaults:\n" +
				"  - {at: 0s, kind: kill-leader}\n" +
				"  - {every: 2s, kind: expire-random, rate: 3, duration: 500ms}\n" +
				"  - {at: 1s, kind: delay-connections, member: 2, delay: 30ms}\n",
			want: Spec{Name: "c", Recipe: FairLock, Ensemble: 3, Faults: []Fault{
				{At: 0, Kind: KillLeader},
				{Every: 2 * time.Second, Kind: ExpireRandom, Rate: 3, Duration: 500 * time.Millisecond},
				{At: time.Second, Kind: DelayConnections, Member: 2, Delay: 30 * time.Millisecond},
			}},
		},
		{
			name: "compare with shorthand steps",
			src:  "name: c\nclients: 10\ncompare:\n  - herd-lock\n  - {name: fair, recipe: fair-lock, description: the good one}\n",
			want: Spec{Name: "c", Clients: 10, Compare: []Step{
				{Recipe: HerdLock},
				{Name: "fair", Recipe: FairLock, Description: "the good one"},
			}},
		},
		{
			name: "anchors and aliases",
			src:  "name: a\nrecipe: fair-lock\nclients: &n 12\nlocks: *n\n",
			want: Spec{Name: "a", Recipe: FairLock, Clients: 12, Locks: 12},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse("dir/scn.yaml", []byte(tt.src))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !specEqual(got, tt.want) {
				t.Errorf("Parse =\n%#v\nwant\n%#v", withoutSrc(got), tt.want)
			}
		})
	}
}
