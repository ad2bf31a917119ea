// Package exporter serves zkherd's figures to Prometheus: a load run's
// counters, gauges and latency histograms while it goes (Load), and the
// inspector's view of an ensemble as a long-running exporter (Inspector).
//
// Both only read: the load side reads the run's one-way events (a
// loadrun.Runner subscription), the inspector side reads inspect.Snapshot values. A
// scrape never reaches the servers or the run; it reads what was last
// handed over.
package exporter
