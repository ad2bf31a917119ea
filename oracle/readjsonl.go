package oracle

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ErrHistory is matched by ReadJSONL's errors: the input is not a
// history.jsonl.
var ErrHistory = errors.New("oracle: not a history.jsonl")

// ReadJSONL reads a history written by WriteJSONL (its operations, paired
// invoke and completion per process); the caller sets the Model and Limit,
// which report.json holds. An operation still open at the end has an
// unknown outcome.
func ReadJSONL(r io.Reader) (*History, error) {
	kinds := map[string]Kind{}
	for k, name := range kindNames {
		if name != "" {
			kinds[name] = Kind(k)
		}
	}
	type line struct {
		Time    int64             `json:"time"`
		Process int32             `json:"process"`
		Type    string            `json:"type"`
		F       string            `json:"f"`
		Value   []json.RawMessage `json:"value"`
		Lost    bool              `json:"lost"`
	}
	h := &History{}
	parts := map[string]int32{}
	open := map[int32]int{} // process -> its open operation in h.Ops
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || len(l.Value) != 2 {
			return nil, fmt.Errorf("%w: line %d is not an operation {time, process, type, f, value: [partition, value]}", ErrHistory, n)
		}
		kind, ok := kinds[l.F]
		if !ok {
			return nil, fmt.Errorf("%w: line %d: unknown operation %q", ErrHistory, n, l.F)
		}
		value := int64(NoValue)
		if string(l.Value[1]) != "null" {
			if err := json.Unmarshal(l.Value[1], &value); err != nil {
				return nil, fmt.Errorf("%w: line %d: value %s is not a number", ErrHistory, n, l.Value[1])
			}
		}
		if l.Type == "invoke" {
			if _, busy := open[l.Process]; busy {
				return nil, fmt.Errorf("%w: line %d: process %d invokes while an operation of its is open", ErrHistory, n, l.Process)
			}
			var name string
			if err := json.Unmarshal(l.Value[0], &name); err != nil {
				return nil, fmt.Errorf("%w: line %d: partition %s is not a path", ErrHistory, n, l.Value[0])
			}
			p, ok := parts[name]
			if !ok {
				p = int32(len(h.Partitions))
				parts[name] = p
				h.Partitions = append(h.Partitions, name)
			}
			open[l.Process] = len(h.Ops)
			h.Ops = append(h.Ops, Op{Call: l.Time, Return: l.Time, Value: value, Client: l.Process, Partition: p, Kind: kind, Outcome: Unknown})
			continue
		}
		i, ok := open[l.Process]
		if !ok || h.Ops[i].Kind != kind {
			return nil, fmt.Errorf("%w: line %d: %s %s of process %d completes no open operation", ErrHistory, n, l.Type, l.F, l.Process)
		}
		delete(open, l.Process)
		op := &h.Ops[i]
		op.Return = l.Time
		if value != NoValue {
			op.Value = value
		}
		switch {
		case l.Type == "info":
			op.Outcome = Unknown
		case l.Type == "ok" && l.Lost:
			op.Outcome = Lost
		case l.Type == "ok":
			op.Outcome = OK
		default:
			return nil, fmt.Errorf("%w: line %d: type %q (zkherd writes invoke, ok and info)", ErrHistory, n, l.Type)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrHistory, err)
	}
	return h, nil
}
