package tuitest

import (
	"fmt"
	"time"

	"github.com/zkherd/zkherd/inspect"
)

// Chain is a fair-lock chain of n contenders with sessions, endpoints and
// ages; with anomalies, waiter 3 watches the wrong node and waiter 5 none.
func Chain(n int, anomalies bool) *inspect.Lock {
	l := &inspect.Lock{Path: "/zkherd/runs/7f3e9c/fair-lock/lock-0", Layout: "curator mutex"}
	name := func(i int) string {
		return fmt.Sprintf("_c_%08x-0000-4000-8000-%012x-lock-%010d", i, i, 100+i)
	}
	for i := 0; i < n; i++ {
		e := inspect.LockEntry{
			Node: name(i), Seq: int64(100 + i), Kind: "lock", Role: inspect.RoleWaiter,
			Session:  0x1000001f3b60000 + int64(i),
			Endpoint: fmt.Sprintf("127.0.0.%d:%d", 1+i%4, 40000+i%20000),
			Age:      time.Duration(n-i) * 3 * time.Millisecond,
		}
		if i == 0 {
			e.Role = inspect.RoleHolder
		} else {
			e.Expect = name(i - 1)
			e.Watching = []string{name(i - 1)}
		}
		l.Entries = append(l.Entries, e)
	}
	if anomalies && n > 5 {
		l.Entries[3].Watching = []string{name(0)}
		l.Entries[3].Flags = l.Entries[3].Flags.With(inspect.AnomalyWrongWatch)
		l.Entries[5].Watching = nil
		l.Entries[5].Flags = l.Entries[5].Flags.With(inspect.AnomalyNoWatch)
		l.Anomalies = []inspect.Anomaly{
			{Kind: inspect.AnomalyWrongWatch, Node: name(3), Detail: "1 waiter(s) watch the wrong node: lock-0000000103 watches lock-0000000100, expected lock-0000000102"},
			{Kind: inspect.AnomalyNoWatch, Node: name(5), Detail: "1 waiter(s) watch no node of the lock, first lock-0000000105"},
		}
	}
	return l
}
