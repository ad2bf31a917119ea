package oracle

import (
	"context"
	"runtime"
	"testing"
)

// BenchmarkCheckContendedLock checks a fair lock's history of 100,000
// grants among 1,000 clients in a closed loop (each acquisition called
// about 1,000 grants before it is granted): about what a 1,000-client
// fair-lock run of 60 s records on this machine. It reports the check's
// time per grant and the heap in use after it.
//
//	go test -run - -bench CheckContendedLock -benchtime 3x ./oracle/
func BenchmarkCheckContendedLock(b *testing.B) {
	h := contended(100_000, 1000, -1)
	b.ResetTimer()
	var peak uint64
	for b.Loop() {
		r := Check(context.Background(), h, Options{})
		if r.Result != ResultOK {
			b.Fatalf("result %s: %+v", r.Result, r)
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100_000, "ns/grant")
	b.ReportMetric(float64(peak)/(1<<20), "heap-MiB")
}
