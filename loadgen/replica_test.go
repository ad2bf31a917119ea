package loadgen

import (
	"context"
	"strings"
	"testing"

	"github.com/zkherd/zkherd/ensemble/enstest"
)

// TestDigestWarning: a member that counted digest mismatches is named
// with its count; none counted, no warning.
func TestDigestWarning(t *testing.T) {
	members := []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}
	if w := digestWarning(members, []int64{0, 0, 0}); w != "" {
		t.Errorf("no mismatches: warning %q, want none", w)
	}
	w := digestWarning(members, []int64{0, 57, 0})
	if !strings.Contains(w, "diverged") || !strings.Contains(w, "57 on 127.0.0.1:2") || strings.Contains(w, "127.0.0.1:1") {
		t.Errorf("57 mismatches on the second member: warning %q", w)
	}
}

// TestReplicaWarningReadsMembers: the servers keep the count the warning
// reads (ZooKeeper 3.6+, digest.enabled by default), and a healthy
// three-member ensemble's members counted no mismatch.
func TestReplicaWarningReadsMembers(t *testing.T) {
	ens := enstest.Start(t, 3)
	for _, addr := range ens.Servers() {
		m, err := mntr(context.Background(), addr, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := m.Int("zk_digest_mismatches_count"); !ok {
			t.Errorf("%s: mntr has no zk_digest_mismatches_count", addr)
		}
	}
	if w := replicaWarning(context.Background(), ens.Servers(), nil, nil); w != "" {
		t.Errorf("a healthy ensemble: warning %q, want none", w)
	}
	// A member that counted mismatches while the run polled it and was
	// restarted since (its count back to 0) is still named.
	seen := seenDigests(nil, serverCounters{digests: []int64{0, -1, 0}})
	seen = seenDigests(seen, serverCounters{digests: []int64{0, 4, -1}})
	seen = seenDigests(seen, serverCounters{digests: []int64{0, 0, 0}})
	if w := replicaWarning(context.Background(), ens.Servers(), nil, seen); !strings.Contains(w, "4 on "+ens.Servers()[1]) {
		t.Errorf("member 2 counted 4 before a restart: warning %q, want it named", w)
	}
}
