package scenarios

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// docs/SCENARIOS.md is the reference of the scenario format. This test
// keeps it in step with the parser: every field name the parser accepts,
// every recipe, arrival kind, distribution kind, fault kind and threshold
// statistic must appear in it as `code`, and every YAML example in it must
// parse.
func TestScenarioDocs(t *testing.T) {
	data, err := os.ReadFile("../docs/SCENARIOS.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	fence := regexp.MustCompile("(?s)```yaml\n(.*?)```")
	documented := map[string]bool{}
	prose := fence.ReplaceAllString(doc, "")
	for _, m := range regexp.MustCompile("`([^`\n]+)`").FindAllStringSubmatch(prose, -1) {
		documented[m[1]] = true
	}
	var names []string
	for _, list := range [][]string{topFields, arrivalFields, holdFields, rwlockFields, semaphoreFields,
		queueFields, barrierFields, stepFields, faultFields, ThresholdStats(),
		{MetricThroughput, MetricErrors, MetricErrorRate}, FaultOns()} {
		names = append(names, list...)
	}
	names = append(names, list(Recipes()), list(ArrivalKinds()), list(DistKinds()), list(FaultKinds()))
	for _, n := range names {
		for _, name := range strings.Split(n, ", ") {
			if !documented[name] {
				t.Errorf("%q is accepted by the parser but not documented in docs/SCENARIOS.md (as `%s`)", name, name)
			}
		}
	}

	blocks := fence.FindAllStringSubmatch(doc, -1)
	if len(blocks) < 5 {
		t.Fatalf("got %d YAML examples, want at least 5", len(blocks))
	}
	for i, b := range blocks {
		if _, err := Parse("SCENARIOS.md example", []byte(b[1])); err != nil {
			t.Errorf("example %d does not parse:\n%s\n%v", i+1, b[1], err)
		}
	}
}

// Every built-in scenario printed by "zkherd scenarios show" parses back:
// its source is the file itself.
func TestBuiltinSourcesParse(t *testing.T) {
	for _, name := range Names() {
		src, _ := BuiltinSource(name)
		s, err := Parse(name+".yaml", src)
		if err != nil || s.Name != name {
			t.Errorf("%s: got name %q, err %v", name, s.Name, err)
		}
	}
}
