package oracle

import (
	"bufio"
	"cmp"
	"encoding/json"
	"io"
	"slices"
	"strconv"
)

// WriteJSONL writes the history as Jepsen's op maps, one JSON object a
// line (docs/ORACLE.md has the mapping): every operation is an invoke at
// its call and a completion (ok, or info when unknown) at its return, ordered by
// time, with index, time (nanoseconds), process (the client), f (the
// kind) and value, a jepsen.independent tuple [partition, value].
func (h *History) WriteJSONL(w io.Writer) error {
	type event struct {
		t      int64
		op     int32
		invoke bool
		// order breaks ties of time: completions first (a process's next
		// call follows its last return), then invokes, an instantaneous
		// operation's completion right after its invoke.
		order int8
	}
	evs := make([]event, 0, 2*len(h.Ops))
	for i, op := range h.Ops {
		done := int8(0)
		if op.Return <= op.Call {
			done = 1
		}
		evs = append(evs, event{op.Call, int32(i), true, 1}, event{max(op.Return, op.Call), int32(i), false, done})
	}
	slices.SortStableFunc(evs, func(a, b event) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		if c := cmp.Compare(a.order, b.order); c != 0 {
			return c
		}
		if c := cmp.Compare(a.op, b.op); c != 0 {
			return c
		}
		if a.invoke == b.invoke {
			return 0
		}
		if a.invoke {
			return -1
		}
		return 1
	})
	names := make([][]byte, len(h.Partitions))
	for i, p := range h.Partitions {
		names[i], _ = json.Marshal(p)
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	var line []byte
	for idx, e := range evs {
		op := h.Ops[e.op]
		typ := "invoke"
		if !e.invoke {
			typ = [...]string{OK: "ok", Unknown: "info", Lost: "ok"}[op.Outcome]
		}
		line = append(line[:0], `{"index":`...)
		line = strconv.AppendInt(line, int64(idx), 10)
		line = append(line, `,"time":`...)
		line = strconv.AppendInt(line, e.t, 10)
		line = append(line, `,"process":`...)
		line = strconv.AppendInt(line, int64(op.Client), 10)
		line = append(line, `,"type":"`...)
		line = append(line, typ...)
		line = append(line, `","f":"`...)
		line = append(line, op.Kind.String()...)
		line = append(line, `","value":[`...)
		if int(op.Partition) < len(names) {
			line = append(line, names[op.Partition]...)
		} else {
			line = append(line, "null"...)
		}
		line = append(line, ',')
		if op.Value == NoValue || (e.invoke && op.Kind == Acquire) {
			line = append(line, "null"...) // a token is known once granted
		} else {
			line = strconv.AppendInt(line, op.Value, 10)
		}
		line = append(line, ']')
		if !e.invoke && op.Outcome == Lost {
			line = append(line, `,"lost":true`...)
		}
		line = append(line, "}\n"...)
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}
