package main

import (
	"strings"
	"testing"

	"github.com/zkherd/zkherd/scenarios"
)

// The scenario help texts, prose in help/, name the reference where the
// scenarios package says it is.
func TestHelpNamesScenarioDoc(t *testing.T) {
	for _, name := range []string{"scenarios", "scenarios-show"} {
		if got := help(name); !strings.Contains(got, scenarios.DocURL+".") {
			t.Errorf("help/%s.txt does not name %s:\n%s", name, scenarios.DocURL, got)
		}
	}
}
