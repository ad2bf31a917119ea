package loadrun

import (
	"strings"
	"testing"
	"time"

	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/scenarios"
)

// TestAdviceNamesNoFlag: the lines a run prints or writes into its
// report name the value the user gave, never a flag; the command's
// Target.Name names it (package main: the flag), else it stays bare.
func TestAdviceNamesNoFlag(t *testing.T) {
	flag := func(in string) string { return "--" + in }
	th, err := scenarios.ParseThreshold("errors<1")
	if err != nil {
		t.Fatal(err)
	}
	short := &loadgen.Result{Run: scenarios.Run{Spec: scenarios.Spec{Name: "s", Recipe: scenarios.FairLock, Clients: 2, Duration: time.Second}}, Ops: 1}
	tests := []struct {
		name       string
		line       func(name func(string) string) string
		bare, flag string
	}{
		{"sweep point excluded", func(name func(string) string) string {
			f := newSweepFit(name)
			r := *short
			f.add(&r)
			return f.excluded["s"][0].Excluded
		}, "run longer (duration)", "run longer (--duration)"},
		{"abort on fail", func(name func(string) string) string {
			a := &abortWatch{thresholds: []scenarios.Threshold{th}, stop: func() {}, name: name}
			a.see(loadgen.Progress{State: "running", Errors: 3})
			return a.reason()
		}, "abort-on-fail: threshold errors<1 crossed", "--abort-on-fail: threshold errors<1 crossed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.line(nil); strings.Contains(got, "--") || !strings.Contains(got, tt.bare) {
				t.Errorf("the library's line %q: want %q, no flag", got, tt.bare)
			}
			if got := tt.line(flag); !strings.Contains(got, tt.flag) {
				t.Errorf("as zkherd load prints it: %q, want %q", got, tt.flag)
			}
		})
	}
}
