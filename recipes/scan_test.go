package recipes

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestScanListing checks the lock's one-pass scan against sorting.
func TestScanListing(t *testing.T) {
	const g = "0c1d6c2e-3f1b-4a7e-9d2c-5b8e7f6a1d2"
	name := func(seq int) string { return fmt.Sprintf("_c_%s%d-lock-%010d", g, seq%10, seq) }
	tests := []struct {
		name      string
		children  []string
		ours      string
		wantFound bool
		wantPred  string
		wantTail  string
	}{
		{"alone", []string{name(5)}, name(5), true, "", ""},
		{"first of three", []string{name(9), name(5), name(7)}, name(5), true, "", name(9)},
		{"middle", []string{name(9), name(5), name(7)}, name(7), true, name(5), name(9)},
		{"last", []string{name(9), name(5), name(7)}, name(9), true, name(7), name(7)},
		{"garbage ignored", []string{"zz", "_c_bad-lock-0000000008", name(5), name(9), "lock-12"}, name(9), true, name(5), name(5)},
		{"other layouts count", []string{"x-1-0000000008", name(9), "lock-0000000003"}, name(9), true, "x-1-0000000008", "x-1-0000000008"},
		{"herd node ignored", []string{HerdNodeName, name(9)}, name(9), true, "", ""},
		{"ours missing", []string{name(5), name(7)}, name(9), false, name(7), name(7)},
		{"ours not sequential", []string{name(5)}, "lock", false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			found, pred, tail := scanListing(tt.children, tt.ours)
			if found != tt.wantFound || pred != tt.wantPred || tail != tt.wantTail {
				t.Errorf("scanListing = %v, %q, %q; want %v, %q, %q", found, pred, tail, tt.wantFound, tt.wantPred, tt.wantTail)
			}
		})
	}
	t.Run("agrees with sorting", func(t *testing.T) {
		for trial := range 200 {
			n := 1 + trial%40
			var children []string
			for i := range n {
				children = append(children, name(3*i+rand.IntN(3)))
			}
			children = append(children, "junk", "_c_x-lock-0000000001")
			rand.Shuffle(len(children), func(i, j int) { children[i], children[j] = children[j], children[i] })
			nodes, _ := ParseChildren(children)
			ours := nodes[rand.IntN(len(nodes))].Name // ours is always well named
			i := indexOf(nodes, ours)
			var wantPred, wantTail string
			if i > 0 {
				wantPred = nodes[i-1].Name
			}
			for j := len(nodes) - 1; j >= 0; j-- {
				if nodes[j].Name != ours {
					wantTail = nodes[j].Name
					break
				}
			}
			found, pred, tail := scanListing(children, ours)
			if !found || pred != wantPred || tail != wantTail {
				t.Fatalf("children %q ours %q: got %v %q %q, want true %q %q", children, ours, found, pred, tail, wantPred, wantTail)
			}
		}
	})
}

// indexOf returns the index of the node named name in nodes, or -1.
func indexOf(nodes []Node, name string) int {
	for i := range nodes {
		if nodes[i].Name == name {
			return i
		}
	}
	return -1
}
