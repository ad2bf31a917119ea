// Package metrics records latencies and counters of a load run.
//
// Latencies go into HdrHistograms (github.com/HdrHistogram/hdrhistogram-go),
// in microseconds with three significant digits, one histogram per Phase.
// Workers record through a Shard of a Recorder: a shard belongs to one worker,
// so recording takes only that shard's mutex, which no other goroutine touches
// except the rotator once per interval. A shard buffers the interval's values
// (an append, about 40ns, no allocation), so an idle shard costs almost
// nothing and thousands of them are cheap; past 8192 values per phase in an
// interval it records them into its own sparse (packed) histograms, which
// bounds its memory.
//
// Once per interval (normally one second) the owner of the Recorder calls
// Rotate: it swaps every shard's buffers for empty ones, records the full
// ones into one dense histogram per phase (raw, and corrected for
// coordinated omission), adds them to the run's totals and keeps a
// compressed copy for the interval log. Rotate returns the Interval just
// closed. At the end, Finish returns a Result with the totals, a per-interval
// timeline and everything the report writers need: percentile summaries,
// .hgrm percentile distributions and .hlog interval logs.
//
// Nothing is dropped silently. Values above the highest trackable value are
// recorded as that value and counted as OverRange, negative durations are
// recorded as zero and counted as Negative, and a value the histogram still
// rejects, or a count a merge drops, is counted too (see Anomalies).
//
// Coordinated omission: RecordIntended records an open-loop operation as
// wrk2 measures it, its latency from its intended start in the corrected
// distribution and its service time (from the call) in the raw one.
// RecordCorrected takes the interval at which operations were meant to start
// and, like the library's RecordCorrectedValue, adds the values a stalled
// generator failed to measure. Raw and corrected distributions are kept side
// by side.
package metrics
