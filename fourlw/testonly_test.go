package fourlw

import (
	"context"
	"sync"
	"time"
)

// Helpers only the tests use, kept out of the binary.

// ParseEnvi parses the reply to envi ("java.version" -> "17.0.15", ...).
func ParseEnvi(reply string) (Conf, error) { return parseKeyValues("envi", reply) }

// WithPeriod sets how often each member is polled; defaults to
// DefaultPeriod. A poll that takes longer than the period is followed by
// the next one at once.
func WithPeriod(d time.Duration) PollerOption { return func(p *Poller) { p.period = d } }

// Report returns one line per member with something unavailable.
func (cs Capabilities) Report() []string {
	var lines []string
	for _, m := range cs {
		if r := m.Report(); r != "" {
			lines = append(lines, r)
		}
	}
	return lines
}

// Probe asks every member, in parallel, which of cmds (default:
// AllCommands) answer as four-letter words and whether its AdminServer
// answers. ctx bounds the whole probe; give it a timeout.
func Probe(ctx context.Context, members []Member, cmds ...Command) Capabilities {
	caps := make(Capabilities, len(members))
	var wg sync.WaitGroup
	for i, m := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			caps[i] = ProbeMember(ctx, m, cmds...)
		}()
	}
	wg.Wait()
	return caps
}
