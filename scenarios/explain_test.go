package scenarios

import (
	"bytes"
	"strings"
	"testing"
)

// TestExplainTwice: explaining the output of Explain again (scenarios show
// of a saved scenarios show) prints the header once, and the YAML as it was.
func TestExplainTwice(t *testing.T) {
	spec, _ := Builtin("fair-lock")
	src, _ := BuiltinSource("fair-lock")
	var once, twice bytes.Buffer
	flag := func(input string) string { return "--" + input }
	Explain(&once, "fair-lock", spec, src, flag)
	Explain(&twice, "fair-lock", spec, once.Bytes(), flag)
	// The command names the input (its flag); this package never does.
	if want := "# zkherd load --scenario my.yaml."; !strings.Contains(once.String(), want) {
		t.Errorf("explained:\n%s\nwant it to say %q", once.String(), want)
	}
	if got := strings.Count(twice.String(), "every default applied:"); got != 1 {
		t.Errorf("header printed %d times, want 1:\n%s", got, twice.String())
	}
	if got, want := twice.String(), once.String(); got != want {
		t.Errorf("explained twice:\n%s\nwant as explained once:\n%s", got, want)
	}
}

func TestWithoutHeader(t *testing.T) {
	for _, tt := range []struct{ name, src, want string }{
		{"no comments", "name: x\n", "name: x\n"},
		{"own comment", "# my scenario\nname: x\n", "# my scenario\nname: x\n"},
		{"header", "# Scenario x, every default applied:\n# x: ...\n#\n# " + DocURL + "\n\nname: x\n", "name: x\n"},
		{"unfinished header", "# Scenario x, every default applied:\nname: x\n", "# Scenario x, every default applied:\nname: x\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(withoutHeader([]byte(tt.src))); got != tt.want {
				t.Errorf("withoutHeader(%q) = %q, want %q", tt.src, got, tt.want)
			}
		})
	}
}
