// Package scalemodel predicts how a lock recipe scales past what one
// machine can measure. From runs at a few client counts (100 to 5,000) it
// fits two simple models by least squares and extrapolates them to 10,000
// or 100,000 clients:
//
//   - server packets per acquisition, linear in the clients:
//     p(N) = a + b*N. For the herd lock every release wakes every waiter,
//     so b is about one notification plus one failed create per waiter;
//     for the fair lock each release wakes one waiter, so b is about 0
//     and p is a constant.
//   - throughput, a power law fitted on log-log scales: T(N) = c*N^d.
//     The server's work per acquisition grows with p(N), so the herd
//     lock's throughput falls about as 1/N (d near -1); the fair lock's
//     stays flat (d = 0, the geometric mean of the measurements).
//
// The package is pure: no ZooKeeper, no clock. zkherd load --sweep runs the
// measurements.
package scalemodel
