package recipes

import (
	"slices"
	"testing"
)

func TestParseNode(t *testing.T) {
	const (
		curatorGUID = "0c1d6c2e-3f1b-4a7e-9d2c-5b8e7f6a1d20"
		hexGUID     = "5f0c3a9e8d7b6a5f4e3d2c1b0a998877"
	)
	tests := []struct {
		name string
		in   string
		want Node
	}{
		{"curator mutex", "_c_" + curatorGUID + "-lock-0000000042",
			Node{Layout: LayoutCurator, Kind: KindLock, Seq: 42, Prefix: "_c_" + curatorGUID + "-lock-", GUID: curatorGUID}},
		{"curator read", "_c_" + curatorGUID + "-__READ__0000000007",
			Node{Layout: LayoutCurator, Kind: KindRead, Seq: 7, Prefix: "_c_" + curatorGUID + "-__READ__", GUID: curatorGUID}},
		{"curator write", "_c_" + curatorGUID + "-__WRIT__0000000008",
			Node{Layout: LayoutCurator, Kind: KindWrite, Seq: 8, Prefix: "_c_" + curatorGUID + "-__WRIT__", GUID: curatorGUID}},
		{"curator semaphore lease", "_c_" + curatorGUID + "-lease-0000000003",
			Node{Layout: LayoutCurator, Kind: KindLease, Seq: 3, Prefix: "_c_" + curatorGUID + "-lease-", GUID: curatorGUID}},
		{"curator leader latch", "_c_" + curatorGUID + "-latch-0000000000",
			Node{Layout: LayoutCurator, Kind: KindLatch, Seq: 0, Prefix: "_c_" + curatorGUID + "-latch-", GUID: curatorGUID}},
		{"zkherd queue item", "_c_" + curatorGUID + "-qn-0000000011",
			Node{Layout: LayoutCurator, Kind: KindQueueItem, Seq: 11, Prefix: "_c_" + curatorGUID + "-qn-", GUID: curatorGUID}},
		{"curator unknown name", "_c_" + curatorGUID + "-member-0000000011",
			Node{Layout: LayoutCurator, Kind: KindOther, Seq: 11, Prefix: "_c_" + curatorGUID + "-member-", GUID: curatorGUID}},
		{"upper-case uuid", "_c_0C1D6C2E-3F1B-4A7E-9D2C-5B8E7F6A1D20-lock-0000000001",
			Node{Layout: LayoutCurator, Kind: KindLock, Seq: 1, Prefix: "_c_0C1D6C2E-3F1B-4A7E-9D2C-5B8E7F6A1D20-lock-", GUID: "0C1D6C2E-3F1B-4A7E-9D2C-5B8E7F6A1D20"}},
		{"go-zookeeper lock", "_c_" + hexGUID + "-lock-0000000123",
			Node{Layout: LayoutGoZookeeper, Kind: KindLock, Seq: 123, Prefix: "_c_" + hexGUID + "-lock-", GUID: hexGUID}},
		{"kazoo lock", hexGUID + "__lock__0000000005",
			Node{Layout: LayoutKazoo, Kind: KindLock, Seq: 5, Prefix: hexGUID + "__lock__", GUID: hexGUID}},
		{"kazoo read lock", hexGUID + "__rlock__0000000006",
			Node{Layout: LayoutKazoo, Kind: KindRead, Seq: 6, Prefix: hexGUID + "__rlock__", GUID: hexGUID}},
		{"zookeeper recipe", "x-72057594037927936-0000000009",
			Node{Layout: LayoutZooKeeper, Kind: KindLock, Seq: 9, Prefix: "x-72057594037927936-", SessionID: 72057594037927936}},
		{"zookeeper docs lock", "lock-0000000001",
			Node{Layout: LayoutSequential, Kind: KindLock, Seq: 1, Prefix: "lock-"}},
		{"zookeeper docs read", "read-0000000002",
			Node{Layout: LayoutSequential, Kind: KindRead, Seq: 2, Prefix: "read-"}},
		{"zookeeper docs write", "write-0000000003",
			Node{Layout: LayoutSequential, Kind: KindWrite, Seq: 3, Prefix: "write-"}},
		{"zookeeper queue", "qn-0000000004",
			Node{Layout: LayoutSequential, Kind: KindQueueItem, Seq: 4, Prefix: "qn-"}},
		{"curator queue", "queue-0000000004",
			Node{Layout: LayoutSequential, Kind: KindQueueItem, Seq: 4, Prefix: "queue-"}},
		{"kazoo queue", "entry-0000000004",
			Node{Layout: LayoutSequential, Kind: KindQueueItem, Seq: 4, Prefix: "entry-"}},
		{"zookeeper election", "n_0000000010",
			Node{Layout: LayoutSequential, Kind: KindElection, Seq: 10, Prefix: "n_"}},
		{"bare sequence", "0000000010",
			Node{Layout: LayoutSequential, Kind: KindOther, Seq: 10, Prefix: ""}},
		{"largest sequence", "lock-2147483647",
			Node{Layout: LayoutSequential, Kind: KindLock, Seq: 2147483647, Prefix: "lock-"}},
		{"herd node", HerdNodeName,
			Node{Layout: LayoutHerd, Kind: KindLock, Seq: -1, Prefix: HerdNodeName}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.Name = tt.in
			got, ok := ParseNode(tt.in)
			if !ok {
				t.Fatalf("ParseNode(%q) not recognised, want %+v", tt.in, tt.want)
			}
			if got != tt.want {
				t.Errorf("ParseNode(%q)\n got %+v\nwant %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseNodeGarbage(t *testing.T) {
	tests := []struct{ name, in string }{
		{"empty", ""},
		{"no sequence", "lock"},
		{"short sequence", "lock-12345"},
		{"letters in sequence", "lock-00000000a1"},
		{"sequence then text", "lock-0000000001x"},
		{"protected without guid", "_c_lock-0000000001"},
		{"protected bad uuid", "_c_0c1d6c2e-3f1b-4a7e-9d2c-5b8e7f6a1dZZ-lock-0000000001"},
		{"protected short hex", "_c_5f0c3a9e-lock-0000000001"},
		{"kazoo unknown suffix", "5f0c3a9e8d7b6a5f4e3d2c1b0a998877__party__0000000001"},
		{"zookeeper bad session", "x-abc-0000000001"},
		{"zookeeper empty session", "x--0000000001"},
		{"slash", "a/lock-0000000001"},
		{"negative sequence", "lock--000000001"},
		{"unicode", "lock-000000000\u0661"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, ok := ParseNode(tt.in); ok {
				t.Errorf("ParseNode(%q) = %+v, want not recognised", tt.in, got)
			}
		})
	}
}

func TestParseChildren(t *testing.T) {
	const g = "0c1d6c2e-3f1b-4a7e-9d2c-5b8e7f6a1d2"
	tests := []struct {
		name        string
		in          []string
		wantOrder   []string
		wantUnknown []string
	}{
		{
			name:      "sorted by sequence, not by name",
			in:        []string{"_c_" + g + "9-lock-0000000003", "_c_" + g + "0-lock-0000000010", "_c_" + g + "5-lock-0000000001"},
			wantOrder: []string{"_c_" + g + "5-lock-0000000001", "_c_" + g + "9-lock-0000000003", "_c_" + g + "0-lock-0000000010"},
		},
		{
			name: "mixed clients share one counter",
			in: []string{
				"_c_5f0c3a9e8d7b6a5f4e3d2c1b0a998877-lock-0000000002",
				"_c_" + g + "1-lock-0000000001",
				"lock-0000000000",
			},
			wantOrder: []string{"lock-0000000000", "_c_" + g + "1-lock-0000000001", "_c_5f0c3a9e8d7b6a5f4e3d2c1b0a998877-lock-0000000002"},
		},
		{
			name:        "unrecognised listed in input order, not fatal",
			in:          []string{"zeta", "lock-0000000004", "config", HerdNodeName},
			wantOrder:   []string{HerdNodeName, "lock-0000000004"},
			wantUnknown: []string{"zeta", "config"},
		},
		{
			name: "empty",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nodes, unknown := ParseChildren(tt.in)
			var order []string
			for _, n := range nodes {
				order = append(order, n.Name)
			}
			if !slices.Equal(order, tt.wantOrder) {
				t.Errorf("order\n got %q\nwant %q", order, tt.wantOrder)
			}
			if !slices.Equal(unknown, tt.wantUnknown) {
				t.Errorf("unrecognised: got %q, want %q", unknown, tt.wantUnknown)
			}
		})
	}
}

func TestPredecessor(t *testing.T) {
	mk := func(kinds ...Kind) []Node {
		nodes := make([]Node, len(kinds))
		for i, k := range kinds {
			nodes[i] = Node{Kind: k, Seq: int64(i)}
		}
		return nodes
	}
	L, R, W, S, Q := KindLock, KindRead, KindWrite, KindLease, KindQueueItem
	tests := []struct {
		name   string
		nodes  []Node
		leases int
		fn     func(nodes []Node, i, leases int) int
		want   []int // per index
	}{
		{"mutex chain", mk(L, L, L, L), 0,
			func(n []Node, i, _ int) int { return MutexPredecessor(n, i) }, []int{-1, 0, 1, 2}},
		{"readers wait for nearest writer", mk(R, R, W, R, R, W, W, R), 0,
			func(n []Node, i, _ int) int { return ReadWritePredecessor(n, i) }, []int{-1, -1, 1, 2, 2, 4, 5, 6}},
		{"kazoo lock node is exclusive for readers", mk(L, R, R), 0,
			func(n []Node, i, _ int) int { return ReadWritePredecessor(n, i) }, []int{-1, 0, 0}},
		{"semaphore of 2", mk(S, S, S, S, S), 2, SemaphorePredecessor, []int{-1, -1, 0, 1, 2}},
		{"semaphore of 0 acts as 1", mk(S, S), 0, SemaphorePredecessor, []int{-1, 0}},
		{"semaphore wider than queue", mk(S, S), 5, SemaphorePredecessor, []int{-1, -1}},
		{"by kind: leases", mk(S, S, S), 2, Predecessor, []int{-1, -1, 0}},
		{"by kind: read/write", mk(W, R, R), 0, Predecessor, []int{-1, 0, 0}},
		{"by kind: queue waits on nothing", mk(Q, Q), 0, Predecessor, []int{-1, -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []int
			for i := range tt.nodes {
				got = append(got, tt.fn(tt.nodes, i, tt.leases))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("out of range", func(t *testing.T) {
		nodes := mk(L, L)
		for _, i := range []int{-1, 2} {
			if got := Predecessor(nodes, i, 1); got != -1 {
				t.Errorf("Predecessor(i=%d) = %d, want -1", i, got)
			}
			if Holds(nodes, i, 1) {
				t.Errorf("Holds(i=%d) = true, want false", i)
			}
		}
	})
	t.Run("holds", func(t *testing.T) {
		nodes := mk(R, R, W, Q)
		want := []bool{true, true, false, false}
		for i := range nodes {
			if got := Holds(nodes, i, 1); got != want[i] {
				t.Errorf("Holds(%d) = %v, want %v", i, got, want[i])
			}
		}
	})
}
