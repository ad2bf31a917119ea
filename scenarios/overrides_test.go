package scenarios

import (
	"testing"
	"time"
)

func TestOverridesApply(t *testing.T) {
	queue := Spec{Name: "q", Recipe: Queue, Clients: 8, Duration: time.Second,
		Params: Params{Queue: &QueueParams{Producers: 2, Consumers: 6, Items: 100}}}
	barrier := Spec{Name: "b", Recipe: Barrier, Clients: 8, Duration: time.Second, Params: Params{Barrier: &BarrierParams{Size: 4}}}
	locks := Spec{Name: "l", Recipe: FairLock, Clients: 8, Locks: 4, Ops: 50}
	tests := []struct {
		name  string
		spec  Spec
		ov    Overrides
		check func(t *testing.T, got Spec)
	}{
		{"queue keeps its producer share", queue, Overrides{Clients: 20}, func(t *testing.T, got Spec) {
			if got.Clients != 20 || got.Queue.Producers != 5 || got.Queue.Consumers != 15 {
				t.Errorf("clients %d, producers %d, consumers %d; want 20, 5, 15", got.Clients, got.Queue.Producers, got.Queue.Consumers)
			}
		}},
		{"queue keeps one of each", queue, Overrides{Clients: 2}, func(t *testing.T, got Spec) {
			if got.Queue.Producers != 1 || got.Queue.Consumers != 1 {
				t.Errorf("producers %d, consumers %d; want 1, 1", got.Queue.Producers, got.Queue.Consumers)
			}
		}},
		{"barrier size that no longer divides", barrier, Overrides{Clients: 10}, func(t *testing.T, got Spec) {
			if got.Barrier.Size != 0 {
				t.Errorf("barrier size %d, want 0 (one barrier)", got.Barrier.Size)
			}
		}},
		{"barrier size that still divides", barrier, Overrides{Clients: 12}, func(t *testing.T, got Spec) {
			if got.Barrier.Size != 4 {
				t.Errorf("barrier size %d, want 4", got.Barrier.Size)
			}
		}},
		{"locks at most the clients", locks, Overrides{Clients: 2}, func(t *testing.T, got Spec) {
			if got.Locks != 2 {
				t.Errorf("locks %d, want 2", got.Locks)
			}
		}},
		{"duration replaces ops and items", queue, Overrides{Duration: 3 * time.Second}, func(t *testing.T, got Spec) {
			if got.Duration != 3*time.Second || got.Ops != 0 || got.Queue.Items != 0 {
				t.Errorf("duration %v, ops %d, items %d; want 3s, 0, 0", got.Duration, got.Ops, got.Queue.Items)
			}
		}},
		{"ops are a queue's items", queue, Overrides{Ops: 7}, func(t *testing.T, got Spec) {
			if got.Queue.Items != 7 || got.Ops != 0 || got.Duration != 0 {
				t.Errorf("items %d, ops %d, duration %v; want 7, 0, 0", got.Queue.Items, got.Ops, got.Duration)
			}
		}},
		{"ops replace a duration", locks, Overrides{Ops: 9, SessionTimeout: 5 * time.Second}, func(t *testing.T, got Spec) {
			if got.Ops != 9 || got.SessionTimeout != 5*time.Second {
				t.Errorf("ops %d, session timeout %v; want 9, 5s", got.Ops, got.SessionTimeout)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := queueOf(tt.spec)
			tt.check(t, tt.ov.Apply(tt.spec))
			if after := queueOf(tt.spec); after != before {
				t.Errorf("Apply changed the scenario's queue block: %+v, was %+v", after, before)
			}
		})
	}
}

// queueOf is s's queue block, or a zero one.
func queueOf(s Spec) QueueParams {
	if s.Queue == nil {
		return QueueParams{}
	}
	return *s.Queue
}
