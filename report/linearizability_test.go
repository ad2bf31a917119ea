package report

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkherd/zkherd/oracle"
)

// zombieHistory is two grants of one lock where the first holder acts on
// its grant after it was told it lost it, while the second holds.
func zombieHistory() *oracle.History {
	ms := int64(1e6)
	return &oracle.History{Model: oracle.Mutex, Partitions: []string{"/zkherd/runs/x/lock-000"}, Ops: []oracle.Op{
		{Client: 0, Kind: oracle.Acquire, Call: 0, Return: 1 * ms, Value: 17, Outcome: oracle.OK},
		{Client: 1, Kind: oracle.Acquire, Call: 0, Return: 5 * ms, Value: 18, Outcome: oracle.OK},
		{Client: 0, Kind: oracle.Release, Call: 8*ms + 1, Return: 9 * ms, Value: oracle.NoValue, Outcome: oracle.Lost},
		{Client: 1, Kind: oracle.Release, Call: 6 * ms, Return: 7 * ms, Value: oracle.NoValue, Outcome: oracle.OK},
		{Client: 0, Kind: oracle.Use, Call: 8 * ms, Return: 8 * ms, Value: 17, Outcome: oracle.OK},
	}}
}

func TestLinearizabilityShown(t *testing.T) {
	run := herdVsFair(t)
	run.Scenarios = run.Scenarios[:1]
	s := run.Scenarios[0]
	s.History = zombieHistory()
	s.Linearizability = oracle.Check(context.Background(), s.History, oracle.Options{})
	if s.Linearizability.Result != oracle.ResultViolation {
		t.Fatalf("check %+v, want a violation", s.Linearizability)
	}

	var sum bytes.Buffer
	if err := WriteSummary(&sum, run); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum.String(), "linearizability: violation (mutex: 5 operations in 1 partition)") {
		t.Errorf("summary lacks the linearizability line:\n%s", sum.String())
	}

	dir := t.TempDir()
	if err := WriteDir(dir, run); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<h3>Linearizability</h3>", "smallest failing window", `<iframe class="linviz"`, "porcupine"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	js, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"linearizability": {`, `"model": "mutex"`, `"operations": 5`, `"partitions": 1`, `"result": "violation"`} {
		if !bytes.Contains(js, []byte(want)) {
			t.Errorf("report.json lacks %s", want)
		}
	}
	f, err := os.Open(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := 0
	for sc := bufio.NewScanner(f); sc.Scan(); lines++ {
	}
	if lines != 10 {
		t.Errorf("history.jsonl has %d lines, want 10 (an invoke and a completion per operation)", lines)
	}
}

// TestRecheck: a report directory's history is checked again to the
// result the run had; a report without histories says so.
func TestRecheck(t *testing.T) {
	run := herdVsFair(t)
	s := run.Scenarios[1]
	s.History = zombieHistory()
	s.Linearizability = oracle.Check(context.Background(), s.History, oracle.Options{})
	dir := t.TempDir()
	if err := WriteDir(dir, run); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Recheck(context.Background(), dir, back)
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != nil || got[1] == nil || got[1].Result != oracle.ResultViolation || got[1].Operations != 5 {
		t.Errorf("rechecked %+v, want scenario 1's violation over 5 operations", got)
	}
	if HistoryFiles(back)[1] != "fair-lock-history.jsonl" {
		t.Errorf("history files %q", HistoryFiles(back))
	}
	if _, err := Recheck(context.Background(), t.TempDir(), back); !errors.Is(err, ErrNoHistory) {
		t.Errorf("Recheck of a directory without histories = %v, want ErrNoHistory", err)
	}
}
