package exporter

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

const monitoringDir = "../docs/monitoring"

// promtool is Debian's, as scripts/setup.sh installs it (CI's too).
const promtool = "/usr/bin/promtool"

// TestAlertRules: the shipped alerting rules are valid for Prometheus, and
// their unit tests (each alert fires on the series it is about, not on a
// healthy one) pass.
func TestAlertRules(t *testing.T) {
	if _, err := os.Stat(promtool); err != nil {
		t.Fatalf("%s: %v (install Debian's prometheus package: scripts/setup.sh)", promtool, err)
	}
	for _, args := range [][]string{
		{"check", "rules", "zkherd-alerts.yml"},
		{"test", "rules", "zkherd-alerts.test.yml"},
	} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = monitoringDir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// exportedNames are the names of every series the exporters can serve,
// from their descriptions (histograms with their _bucket, _sum and _count).
func exportedNames(t *testing.T) map[string]bool {
	t.Helper()
	reg := prometheus.NewRegistry()
	l, err := NewLoad(reg)
	if err != nil {
		t.Fatal(err)
	}
	x, err := NewInspector(reg, 0)
	if err != nil {
		t.Fatal(err)
	}
	fq := regexp.MustCompile(`fqName: "([a-z_:]+)"`)
	names := map[string]bool{}
	ch := make(chan *prometheus.Desc, 100)
	l.Describe(ch)
	x.Describe(ch)
	close(ch)
	for d := range ch {
		m := fq.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("no name in %s", d)
		}
		names[m[1]] = true
	}
	for _, h := range []string{"zkherd_latency_seconds", "zkherd_inspector_poll_seconds"} {
		if !names[h] {
			t.Fatalf("histogram %s not described", h)
		}
		for _, s := range []string{"_bucket", "_sum", "_count"} {
			names[h+s] = true
		}
	}
	return names
}

var metricName = regexp.MustCompile(`\bzkherd_[a-z_]+\b`)

// TestDashboardQueriesExportedMetrics: every query of every panel of the
// shipped Grafana dashboard, and every alerting rule, names only metrics
// the code exports (a renamed metric would leave a panel empty and an
// alert silent).
func TestDashboardQueriesExportedMetrics(t *testing.T) {
	names := exportedNames(t)
	b, err := os.ReadFile(filepath.Join(monitoringDir, "zkherd-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Type, Title string
			Targets     []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	used := map[string]bool{}
	panels := 0
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		panels++
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			found := metricName.FindAllString(tg.Expr, -1)
			if len(found) == 0 {
				t.Errorf("panel %q: query %q names no zkherd metric", p.Title, tg.Expr)
			}
			for _, n := range found {
				used[n] = true
				if !names[n] {
					t.Errorf("panel %q: %s is not a metric zkherd exports", p.Title, n)
				}
			}
		}
	}
	if panels < 10 {
		t.Errorf("dashboard has %d panels, want the load's and the exporter's (10 or more)", panels)
	}
	rules, err := os.ReadFile(filepath.Join(monitoringDir, "zkherd-alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(rules), "\n") {
		if !strings.Contains(line, "expr:") {
			continue
		}
		for _, n := range metricName.FindAllString(line, -1) {
			if !names[n] {
				t.Errorf("alerting rule %q: %s is not a metric zkherd exports", strings.TrimSpace(line), n)
			}
		}
	}
	// Every metric the exporters serve is on the dashboard, so a new one
	// is not forgotten there.
	var missing []string
	for n := range names {
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")
		if !used[n] && !used[base+"_bucket"] && !used[base] && !strings.HasSuffix(n, "_sum") && !strings.HasSuffix(n, "_count") && n != "zkherd_run_info" {
			missing = append(missing, n)
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("exported but on no dashboard panel: %v", missing)
	}
}
