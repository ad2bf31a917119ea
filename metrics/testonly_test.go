package metrics

import "time"

// Helpers only the tests use, kept out of the binary.

// WithHighest sets the largest latency recorded as itself; defaults to
// DefaultHighest. It must be at least one millisecond.
func WithHighest(d time.Duration) Option { return func(c *config) { c.highest = d } }
