package loadgen

import (
	"slices"
	"strings"
	"testing"
)

func TestRangesOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		ids  []int64
		want []ItemRange
	}{
		{"none", nil, nil},
		{"one", []int64{7}, []ItemRange{{7, 7}}},
		{"a run out of order", []int64{3, 1, 2, 5}, []ItemRange{{1, 3}, {5, 5}}},
		{"repeats", []int64{2, 2, 3}, []ItemRange{{2, 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := rangesOf(slices.Clone(tc.ids))
			if !slices.Equal(got, tc.want) {
				t.Errorf("rangesOf(%v) = %v, want %v", tc.ids, got, tc.want)
			}
			var back []int64
			EachItem(got, func(id int64) { back = append(back, id) })
			if want := slices.Compact(slices.Sorted(slices.Values(tc.ids))); !slices.Equal(back, want) {
				t.Errorf("EachItem gave %v, want %v", back, want)
			}
		})
	}
}

func TestSettle(t *testing.T) {
	p1 := int64(1) << itemIDBits
	for _, tc := range []struct {
		name       string
		ledgers    []*QueueLedger
		remaining  map[int64]bool
		lost, dups int64
		violation  string
	}{
		{name: "taken by the other process", ledgers: []*QueueLedger{
			{Queued: []ItemRange{{1, 10}}, Consumed: []ItemRange{{p1 + 1, p1 + 5}}},
			{Queued: []ItemRange{{p1 + 1, p1 + 5}}, Consumed: []ItemRange{{1, 10}}},
		}},
		{name: "still queued is not lost", ledgers: []*QueueLedger{
			{Queued: []ItemRange{{1, 3}}, Consumed: []ItemRange{{1, 2}}},
		}, remaining: map[int64]bool{3: true}},
		{name: "lost", ledgers: []*QueueLedger{
			{Queued: []ItemRange{{1, 3}}},
			{Consumed: []ItemRange{{1, 1}}},
		}, lost: 2, violation: "lost item: item 2 of process 0"},
		{name: "taken by two processes", ledgers: []*QueueLedger{
			{Queued: []ItemRange{{1, 2}}, Consumed: []ItemRange{{1, 2}}},
			{Consumed: []ItemRange{{2, 2}}},
		}, dups: 1, violation: "duplicate item: item 2 of process 0 consumed by two processes"},
		{name: "acknowledgement unknown, gone", ledgers: []*QueueLedger{
			{Queued: []ItemRange{{p1 + 4, p1 + 4}}},
			{AckUnknown: []ItemRange{{p1 + 4, p1 + 4}}},
		}},
		{name: "deleted by the foreign client", ledgers: []*QueueLedger{
			{Queued: []ItemRange{{1, 1}}, ForeignDeleted: []ItemRange{{1, 1}}},
		}},
		{name: "own duplicates add up", ledgers: []*QueueLedger{{Duplicates: 2}, {Duplicates: 1}}, dups: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := settle(tc.ledgers, tc.remaining, QueueSettlement{})
			if got.Lost != tc.lost || got.Duplicates != tc.dups {
				t.Errorf("lost %d, duplicates %d; want %d, %d", got.Lost, got.Duplicates, tc.lost, tc.dups)
			}
			if tc.violation == "" && len(got.Violations) > 0 || tc.violation != "" && !slices.ContainsFunc(got.Violations, func(v string) bool { return strings.HasPrefix(v, tc.violation) }) {
				t.Errorf("violations %q, want %q", got.Violations, tc.violation)
			}
		})
	}
}

func TestOccupancyJudge(t *testing.T) {
	excl := &occupancy{process: 0, limit: 1}
	sem := &occupancy{process: 0, limit: 2}
	for _, tc := range []struct {
		name     string
		o        *occupancy
		own      string
		mode     string
		children []string
		ok       bool
	}{
		{"alone", excl, "w-p0-1-0", occWrite, []string{"w-p0-1-0"}, true},
		{"two of this process: the guards' to count", excl, "w-p0-1-0", occWrite, []string{"w-p0-1-0", "w-p0-2-1"}, true},
		{"another process's holder", excl, "w-p0-1-0", occWrite, []string{"w-p0-1-0", "w-p1-9-0"}, false},
		{"readers share", excl, "r-p0-1-0", occRead, []string{"r-p0-1-0", "r-p2-9-0"}, true},
		{"a reader with another's writer", excl, "r-p0-1-0", occRead, []string{"r-p0-1-0", "w-p2-9-0"}, false},
		{"a writer with another's reader", excl, "w-p0-1-0", occWrite, []string{"w-p0-1-0", "r-p2-9-0"}, false},
		{"leases within the limit", sem, "w-p0-1-0", occWrite, []string{"w-p0-1-0", "w-p1-9-0"}, true},
		{"leases over the limit", sem, "w-p0-1-0", occWrite, []string{"w-p0-1-0", "w-p1-9-0", "w-p2-8-0"}, false},
		{"process 1 is not process 10", excl, "w-p1-1-0", occWrite, []string{"w-p1-1-0", "w-p10-9-0"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := *tc.o
			if strings.Contains(tc.own, "-p1-") {
				o.process = 1
			}
			if _, ok := o.judge(tc.own, tc.mode, tc.children); ok != tc.ok {
				t.Errorf("judge(%v) allowed %v, want %v", tc.children, ok, tc.ok)
			}
		})
	}
}

func TestGrantedRecords(t *testing.T) {
	records := []string{
		"w-p0-00000000000000a1-0-lock-0000000003", // its node is there
		"w-p1-00000000000000b2-1-lock-0000000001", // its node was deleted: lost
		"w-p2-00000000000000c3-0-",                // a lock that names no node
		"w-p2-00000000000000c3-1",                 // an older record
	}
	got := granted(records, []string{"lock-0000000003", "lock-0000000004"})
	want := []string{records[0], records[2], records[3]}
	if !slices.Equal(got, want) {
		t.Errorf("granted = %q, want %q", got, want)
	}
}
