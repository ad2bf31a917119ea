package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
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
