package report

import (
	"fmt"

	"github.com/zkherd/zkherd/oracle"
)

// linOpRow is one operation of a failing window in report.html.
type linOpRow struct {
	Client, Kind, Value, Outcome, Call, Return string
}

// linearizabilityView is what report.html shows of the oracle's result:
// its line, and for a violation the failing window's operations and
// porcupine's drawing of them.
func linearizabilityView(r *oracle.Result) (line string, rows []linOpRow, viz string) {
	if r == nil {
		return "", nil, ""
	}
	line = r.Line()
	v := r.Violation
	if v == nil {
		return line, nil, ""
	}
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
	return line, rows, string(v.HTML)
}
