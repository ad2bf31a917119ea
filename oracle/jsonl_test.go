package oracle

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestWriteJSONLIsJepsenOps(t *testing.T) {
	h := hist(Mutex, 0,
		op(0, Acquire, 0, 2, 10), lost(op(0, Release, 2, 5, NoValue)), op(1, Acquire, 1, -1, NoValue))
	var b bytes.Buffer
	if err := h.WriteJSONL(&b); err != nil {
		t.Fatal(err)
	}
	type line struct {
		Index   int    `json:"index"`
		Time    int64  `json:"time"`
		Process int    `json:"process"`
		Type    string `json:"type"`
		F       string `json:"f"`
		Value   []any  `json:"value"`
		Lost    bool   `json:"lost"`
	}
	var got []line
	sc := bufio.NewScanner(&b)
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		got = append(got, l)
	}
	want := []line{
		{0, 0, 0, "invoke", "acquire", []any{"/p", nil}, false},
		{1, 1e6, 1, "invoke", "acquire", []any{"/p", nil}, false},
		{2, 1e6, 1, "info", "acquire", []any{"/p", nil}, false},
		{3, 2e6, 0, "ok", "acquire", []any{"/p", 10.0}, false},
		{4, 2e6, 0, "invoke", "release", []any{"/p", nil}, false},
		{5, 5e6, 0, "ok", "release", []any{"/p", nil}, true},
	}
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Index != w.Index || g.Time != w.Time || g.Process != w.Process || g.Type != w.Type || g.F != w.F || g.Lost != w.Lost || g.Value[0] != w.Value[0] || g.Value[1] != w.Value[1] {
			t.Errorf("line %d: got %+v, want %+v", i, g, w)
		}
	}
}

// TestJSONLProcessesSequential: in a zombie run's history.jsonl each
// process's operations follow one another (invoke, completion, invoke...),
// as Jepsen's histories must.
func TestJSONLProcessesSequential(t *testing.T) {
	h := contended(200, 5, 17)
	for item := range int64(3) { // the queue's final listing: instantaneous, at one moment
		h.Ops = append(h.Ops, Op{Client: 5, Kind: Gone, Call: 5e9, Return: 5e9, Value: item, Outcome: OK})
	}
	var b bytes.Buffer
	if err := h.WriteJSONL(&b); err != nil {
		t.Fatal(err)
	}
	open := map[int]bool{}
	sc := bufio.NewScanner(&b)
	for sc.Scan() {
		var l struct {
			Process int    `json:"process"`
			Type    string `json:"type"`
			Index   int    `json:"index"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		if (l.Type == "invoke") == open[l.Process] {
			t.Fatalf("line %d: process %d %s while it has %v an operation open", l.Index, l.Process, l.Type, open[l.Process])
		}
		open[l.Process] = l.Type == "invoke"
	}
}

// TestReadJSONLRoundTrip: a history read back from history.jsonl is
// checked to the same result (a zombie's violation, its window).
func TestReadJSONLRoundTrip(t *testing.T) {
	h := contended(300, 7, 120)
	var b bytes.Buffer
	if err := h.WriteJSONL(&b); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSONL(&b)
	if err != nil {
		t.Fatal(err)
	}
	back.Model = h.Model
	want := Check(context.Background(), h, Options{})
	got := Check(context.Background(), back, Options{})
	if got.Result != want.Result || got.Operations != want.Operations || got.Checked != want.Checked || len(got.Violation.Operations) != len(want.Violation.Operations) {
		t.Errorf("read back: %s %d/%d ops, window %d; written: %s %d/%d, window %d", got.Result, got.Checked, got.Operations,
			len(got.Violation.Operations), want.Result, want.Checked, want.Operations, len(want.Violation.Operations))
	}
	for _, bad := range []string{"{}\n", `{"time":1,"process":0,"type":"ok","f":"acquire","value":["/p",1]}` + "\n", `{"time":1,"process":0,"type":"invoke","f":"fly","value":["/p",null]}` + "\n"} {
		if _, err := ReadJSONL(strings.NewReader(bad)); !errors.Is(err, ErrHistory) {
			t.Errorf("ReadJSONL(%q) = %v, want ErrHistory", bad, err)
		}
	}
}
