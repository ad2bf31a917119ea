package scenarios

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestBuiltinsParseAndValidate(t *testing.T) {
	want := []string{"barrier", "election-adversary", "election-chaos", "election-churn", "fair-lock", "fair-lock-adversary", "fair-lock-chaos",
		"fair-lock-zombie", "herd-children", "herd-lock", "herd-lock-adversary", "herd-vs-fair", "queue", "queue-adversary", "queue-chaos",
		"rwlock-adversary", "rwlock-mix", "semaphore"}
	if got := Names(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			s, ok := Builtin(name)
			if !ok {
				t.Fatalf("Builtin(%q) not found", name)
			}
			if err := s.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
			e := s.Effective()
			if err := s.ValidateEnsemble(e.Ensemble, true); err != nil {
				t.Errorf("ValidateEnsemble(%d): %v", e.Ensemble, err)
			}
			src, ok := BuiltinSource(name)
			if !ok || !bytes.Contains(src, []byte("name: "+name)) {
				t.Errorf("BuiltinSource(%q) = %q, want the YAML naming it", name, src)
			}
			// The source is an example users copy: it must parse to the same Spec.
			again, err := Parse(name+".yaml", src)
			if err != nil || !specEqual(again, s) {
				t.Errorf("Parse(BuiltinSource) = %+v, %v; want %+v", again, err, s)
			}
			if words := len(strings.Fields(s.Description)); words < 30 {
				t.Errorf("description has %d words, want a paragraph explaining what it shows", words)
			}
			runs := s.Runs()
			if len(runs) == 0 {
				t.Fatal("Runs() is empty")
			}
			for _, r := range runs {
				if !r.Recipe.Valid() || r.Clients < 1 || (r.Duration == 0) == (r.Ops == 0) {
					t.Errorf("run %s: recipe %q, clients %d, duration %v, ops %d: want a recipe, clients and exactly one bound",
						r.Name, r.Recipe, r.Clients, r.Duration, r.Ops)
				}
				if name == "herd-vs-fair" {
					continue
				}
				// Non-demo scenarios complete well under a minute: ramp-up plus duration.
				if total := RampFor(r).Done() + r.Duration; total > 40*time.Second || r.Duration == 0 {
					t.Errorf("run %s takes %v (ramp %v + duration %v), want a duration bound under 40s", r.Name, total, RampFor(r).Done(), r.Duration)
				}
			}
		})
	}
}

func TestHerdVsFair(t *testing.T) {
	s, ok := Builtin("herd-vs-fair")
	if !ok {
		t.Fatal("herd-vs-fair missing")
	}
	runs := s.Runs()
	if len(runs) != 2 {
		t.Fatalf("herd-vs-fair has %d runs, want 2", len(runs))
	}
	for i, want := range []Recipe{HerdLock, FairLock} {
		r := runs[i]
		if r.Recipe != want || r.Group != "herd-vs-fair" || r.Step != i || r.OfSteps != 2 {
			t.Errorf("run %d: recipe %s group %q step %d/%d, want %s in herd-vs-fair step %d/2", i, r.Recipe, r.Group, r.Step, r.OfSteps, want, i)
		}
		if r.Clients != 1000 || r.Arrival.Kind != Stampede {
			t.Errorf("run %d: %d clients, %s arrivals; want 1000, stampede", i, r.Clients, r.Arrival.Kind)
		}
	}
	if runs[0].Hold != runs[1].Hold || runs[0].Duration != runs[1].Duration {
		t.Errorf("herd hold %v for %v, fair hold %v for %v: want the same", runs[0].Hold, runs[0].Duration, runs[1].Hold, runs[1].Duration)
	}
}

func TestChaosBuiltinsHaveFaults(t *testing.T) {
	for _, name := range []string{"fair-lock-chaos", "queue-chaos", "election-chaos",
		"fair-lock-adversary", "rwlock-adversary", "queue-adversary", "election-adversary", "herd-lock-adversary"} {
		t.Run(name, func(t *testing.T) {
			s, _ := Builtin(name)
			if len(s.Faults) == 0 {
				t.Fatal("no faults")
			}
			if s.Effective().Ensemble != 3 {
				t.Errorf("ensemble %d, want 3 (faults kill, pause and lag members)", s.Effective().Ensemble)
			}
			// Against servers zkherd did not start, process faults are refused.
			if err := s.ValidateEnsemble(3, false); err == nil {
				t.Errorf("ValidateEnsemble(3, external) = nil, want the kill/pause/lag faults refused")
			}
		})
	}
}

// TestAdversaryBuiltins checks that every new fault kind appears in a
// built-in scenario.
func TestAdversaryBuiltins(t *testing.T) {
	seen := map[FaultKind]bool{}
	ons := map[string]bool{}
	for _, s := range Builtins() {
		for _, f := range s.Faults {
			seen[f.Kind] = true
			if f.On != "" {
				ons[f.On] = true
			}
		}
	}
	for _, k := range FaultKinds() {
		if !seen[k] {
			t.Errorf("no built-in scenario has a %s fault", k)
		}
	}
	for _, on := range FaultOns() {
		// No recipe sends a bare setData during a run (the semaphore sets
		// its limit once); the faults package tests cuts on it.
		if !ons[on] && on != FaultOnSetData {
			t.Errorf("no built-in scenario cuts on %s", on)
		}
	}
}
