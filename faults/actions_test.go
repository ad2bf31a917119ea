package faults

import (
	"testing"

	"github.com/zkherd/zkherd/scenarios"
)

// TestEveryKindHasAnAction: a kind added to scenarios' table without its
// action here would validate and then do nothing.
func TestEveryKindHasAnAction(t *testing.T) {
	for _, k := range scenarios.FaultKinds() {
		if _, ok := actions[k]; !ok {
			t.Errorf("fault kind %s has no entry in actions", k)
		}
	}
	for k := range actions {
		if !k.Valid() {
			t.Errorf("actions has %s, which scenarios does not list", k)
		}
	}
}
