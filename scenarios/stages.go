package scenarios

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Stage is one step of a rate schedule: Rate operations per second, over
// all clients, for Duration (k6's stages, in constant steps).
type Stage struct {
	Rate     float64
	Duration time.Duration
}

// ErrStages is matched by every error ParseStages returns.
var ErrStages = errors.New("bad rate schedule")

// ParseStages reads a schedule written RATE:DURATION,RATE:DURATION...,
// such as "100:30s,500:30s,1000:60s" (zkherd load --rate, a scenario's
// arrival.stages).
func ParseStages(s string) ([]Stage, error) {
	var out []Stage
	for _, part := range strings.Split(strings.ReplaceAll(s, " ", ""), ",") {
		rate, dur, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("%w: %q: write each stage RATE:DURATION, such as 100:30s,500:30s", ErrStages, part)
		}
		r, err := strconv.ParseFloat(rate, 64)
		if err != nil || r < 0 || math.IsInf(r, 0) || math.IsNaN(r) {
			return nil, fmt.Errorf("%w: %q: the rate %q is not a number of operations per second", ErrStages, part, rate)
		}
		d, err := time.ParseDuration(dur)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%w: %q: the duration %q needs a unit and must be above 0, such as 30s", ErrStages, part, dur)
		}
		out = append(out, Stage{Rate: r, Duration: d})
	}
	if StagesDuration(out) > 0 && TargetRate(out) == 0 {
		return nil, fmt.Errorf("%w: %q: every stage has rate 0", ErrStages, s)
	}
	return out, nil
}

// FormatStages writes stages as ParseStages reads them.
func FormatStages(st []Stage) string {
	parts := make([]string, len(st))
	for i, s := range st {
		parts[i] = strconv.FormatFloat(s.Rate, 'f', -1, 64) + ":" + s.Duration.String()
	}
	return strings.Join(parts, ",")
}

// StagesDuration is how long a schedule lasts.
func StagesDuration(st []Stage) time.Duration {
	var d time.Duration
	for _, s := range st {
		d += s.Duration
	}
	return d
}

// TargetRate is a schedule's operations per second over its whole length.
func TargetRate(st []Stage) float64 {
	d := StagesDuration(st)
	if d <= 0 {
		return 0
	}
	var ops float64
	for _, s := range st {
		ops += s.Rate * s.Duration.Seconds()
	}
	return ops / d.Seconds()
}

// StagedPacer starts operations at each stage's constant rate in turn,
// evenly spaced within a stage, from 0.
type StagedPacer struct {
	Stages []Stage
	Limit  Limit
}

// Due returns when operation n is meant to start: in the stage its count
// falls in, n less the operations of the stages before at that stage's
// rate.
func (p StagedPacer) Due(n uint64) time.Duration {
	var at time.Duration
	var before float64
	for _, s := range p.Stages {
		k := s.Rate * s.Duration.Seconds()
		if float64(n) < before+k {
			return at + durationOf((float64(n)-before)/s.Rate)
		}
		before += k
		at += s.Duration
	}
	return math.MaxInt64
}

// Pace waits until operation done is due: at once when behind schedule.
func (p StagedPacer) Pace(elapsed time.Duration, done uint64) (time.Duration, bool) {
	due := p.Due(done)
	if due == math.MaxInt64 {
		return 0, true
	}
	return paceTo(due, elapsed, done, p.Limit)
}
