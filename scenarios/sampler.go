package scenarios

import (
	"math/rand/v2"
	"time"
)

// Sampler draws hold or work times from a Distribution with its own
// seeded source. It is not safe for concurrent use: give each client its
// own (NewSampler(d, seed, uint64(client))).
type Sampler struct {
	d   Distribution
	rng *rand.Rand
}

// NewSampler returns a sampler of d (after defaults) whose draws depend only
// on seed and stream: the same pair gives the same sequence, different
// streams give independent ones.
func NewSampler(d Distribution, seed, stream uint64) *Sampler {
	return &Sampler{d: d.Effective(), rng: newRand(seed, stream)}
}

func newRand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream^0xda3e39cb94b95bdb))
}

// Next draws one time.
func (s *Sampler) Next() time.Duration {
	d := s.d
	switch d.Kind {
	case Uniform:
		if d.Max <= d.Min {
			return d.Min
		}
		return d.Min + time.Duration(s.rng.Int64N(int64(d.Max-d.Min)+1))
	case Exponential:
		t := durationOf(s.rng.ExpFloat64() * d.Mean.Seconds())
		if d.Max > 0 && t > d.Max {
			t = d.Max
		}
		return t
	}
	return d.Value
}
