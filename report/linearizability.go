package report

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zkherd/zkherd/oracle"
)

// linOpRow is one operation of a failing window in report.html.
type linOpRow struct {
	Client, Kind, Value, Outcome, Call, Return string
}

// linearizabilityView is what report.html shows of a violation the
// oracle found, beside its verdict (Scenario.CheckList): the failing
// window's operations and porcupine's drawing of them.
func linearizabilityView(r *oracle.Result) (rows []linOpRow, viz string) {
	if r == nil || r.Violation == nil {
		return nil, ""
	}
	v := r.Violation
	for _, op := range v.Operations {
		row := linOpRow{Client: fmt.Sprint(op.Client), Kind: op.Kind, Outcome: op.Outcome,
			Call: fmt.Sprintf("%.3f", op.CallMs), Return: "never (unknown)"}
		if op.Value != oracle.NoValue {
			row.Value = fmt.Sprint(op.Value)
		}
		if op.ReturnMs != nil {
			row.Return = fmt.Sprintf("%.3f", *op.ReturnMs)
		}
		rows = append(rows, row)
	}
	return rows, string(v.HTML)
}

// ErrNoHistory is returned by Recheck for a report none of whose
// scenarios has a history to check.
var ErrNoHistory = errors.New("report: no history.jsonl to check (runs before zkherd recorded histories have none)")

// Recheck checks again the histories a report directory holds, each with
// the model its report.json names: for each scenario, the new result (nil
// for a scenario without a history).
func Recheck(ctx context.Context, dir string, run *Run) ([]*oracle.Result, error) {
	out := make([]*oracle.Result, len(run.Scenarios))
	files := HistoryFiles(run)
	found := false
	for i, s := range run.Scenarios {
		l := s.Linearizability
		if l == nil {
			continue
		}
		f, err := os.Open(filepath.Join(dir, files[i]))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("report: %s: %w", files[i], err)
		}
		h, err := oracle.ReadJSONL(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("report: %s: %w", files[i], err)
		}
		h.Model, h.Limit, h.Scope = l.Model, l.Limit, l.Scope
		out[i], found = oracle.Check(ctx, h, oracle.Options{}), true
	}
	if !found {
		return nil, ErrNoHistory
	}
	return out, nil
}
