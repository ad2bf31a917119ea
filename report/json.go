package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/zkherd/zkherd/loadgen"
)

// WriteJSON writes run as report.json: indented, fields in a fixed order,
// map keys sorted, so the same run always gives the same bytes.
func WriteJSON(w io.Writer, run *Run) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(run); err != nil {
		return fmt.Errorf("report: writing JSON: %w", err)
	}
	return nil
}

// ReadJSON reads a report.json. A missing file gives an error that matches
// fs.ErrNotExist; a file that is not a report one that matches
// ErrMalformed and says where the problem is.
func ReadJSON(path string) (*Run, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("report: cannot read %s: %w", path, err)
	}
	return parseJSON(path, data)
}

func parseJSON(path string, data []byte) (*Run, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%w: %s is empty", ErrMalformed, path)
	}
	var run Run
	if err := json.Unmarshal(data, &run); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			line, col := position(data, syn.Offset-1)
			return nil, fmt.Errorf("%w: %s:%d:%d: %v", ErrMalformed, path, line, col, syn)
		case errors.As(err, &typ):
			line, col := position(data, typ.Offset-1)
			return nil, fmt.Errorf("%w: %s:%d:%d: field %s holds a JSON %s, want %s", ErrMalformed, path, line, col,
				typ.Field, typ.Value, typ.Type)
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, path, err)
	}
	if run.ZkherdVersion == "" && run.Scenarios == nil {
		return nil, fmt.Errorf("%w: %s has neither zkherd_version nor scenarios", ErrMalformed, path)
	}
	for i, s := range run.Scenarios {
		if s == nil {
			return nil, fmt.Errorf("%w: %s: scenario %d is null", ErrMalformed, path, i+1)
		}
	}
	return &run, nil
}

// position turns a 0-based byte offset into a 1-based line and column.
func position(data []byte, offset int64) (line, col int) {
	offset = min(max(offset, 0), int64(len(data)))
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = len(before) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// CheckResult is one check of a scenario in report.json's check_results:
// the scenario's CheckList as written, for scripts that read every check
// (the linearizability verdict and the thresholds included) one way.
// Reports read back recompute the list from checks, linearizability and
// thresholds, which keep their keys, so old reports read as new ones.
type CheckResult struct {
	Key   string `json:"key"`
	Label string `json:"label"`
	// Status is pass, fail, not checked, told (counted, not failing) or
	// n/a (a recipe this version does not know).
	Status string `json:"status"`
	// Count is the violations found; absent when the check was not made.
	Count *int64 `json:"count,omitempty"`
	// Value is what the summary shows.
	Value string `json:"value"`
}

// checkResults is list as report.json writes it.
func checkResults(list []loadgen.CheckOutcome) []CheckResult {
	out := make([]CheckResult, 0, len(list))
	for _, o := range list {
		r := CheckResult{Key: o.Key, Label: o.Label, Status: o.Status(), Value: o.Value()}
		if o.Made() {
			r.Count = &o.Count
		}
		out = append(out, r)
	}
	return out
}

// MarshalJSON writes the scenario's fields, then its check list
// (check_results), which is not read back: CheckList recomputes it.
func (s *Scenario) MarshalJSON() ([]byte, error) {
	type fields Scenario // without this method
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // thresholds hold < and >
	err := enc.Encode(struct {
		*fields
		CheckResults []CheckResult `json:"check_results"`
	}{(*fields)(s), checkResults(s.CheckList())})
	return bytes.TrimRight(b.Bytes(), "\n"), err
}
