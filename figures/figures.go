// Package figures is the one list of a load run's figures, as k6's
// built-in metrics are one list: the raw counts a run records (Totals),
// each with the rule that merges the counts of several processes, and the
// figures derived from them, each with its report.json and threshold name,
// its label, its format, its formula and the recipes it applies to. The
// summary, report.json, report.html, report compare, thresholds, the
// multi-process merge, the dashboard and the metrics endpoint iterate
// these lists; adding a figure is an entry here and the line that counts
// what it needs.
package figures

import (
	"fmt"
	"slices"
	"strings"
)

// Count names one raw count of a run: its report.json name (in the
// scenario's "herd" object, a name kept from when it held herd measures
// only).
type Count string

// Merge is how the counts of several processes of one run combine.
type Merge int

const (
	// Sum adds the processes' counts: each counts its own clients.
	Sum Merge = iota
	// Max keeps the largest: every process reads the same servers (mntr)
	// or the same clock, so their counts are the same measure, not parts.
	Max
)

// CountSpec is one raw count: its name, its merge rule, what it counts.
type CountSpec struct {
	Count Count
	Merge Merge
	// Server: the count is read from the servers (mntr) and is unknown
	// when they could not be read.
	Server bool
	Doc    string
}

// The raw counts of a run's window.
const (
	Operations     Count = "operations"
	Releases       Count = "releases"
	Wakeups        Count = "wakeups"
	ZKRequests     Count = "zk_requests"
	ServerPackets  Count = "server_packets"
	WatchFanout    Count = "watch_fanout"
	WindowMs       Count = "duration_ms"
	SessionsOpened Count = "sessions_opened"
)

// counts is the one list of raw counts.
var counts = []CountSpec{
	{Count: Operations, Merge: Sum, Doc: "operations completed in the window"},
	{Count: Releases, Merge: Sum, Doc: "releases of a lock, lease or leadership in the window"},
	{Count: Wakeups, Merge: Sum, Doc: "watch notifications that woke a waiting client (for locks: about another node than its own)"},
	{Count: ZKRequests, Merge: Sum, Doc: "requests the clients sent to ZooKeeper"},
	{Count: ServerPackets, Merge: Max, Server: true, Doc: "packets received plus sent by the servers, every member (mntr)"},
	{Count: WatchFanout, Merge: Max, Server: true, Doc: "watches triggered on the servers (mntr's watch counts)"},
	{Count: SessionsOpened, Merge: Sum, Doc: "client sessions established in the window (re-openings after an expiry; every session in a run bounded by operations, whose window opens with the first)"},
	{Count: WindowMs, Merge: Max, Doc: "milliseconds the window lasted (before it opens, live: since the first session opened)"},
}

// Format is how a figure's value is written.
type Format int

const (
	// OneDecimal: 12.3, thousands separated.
	OneDecimal Format = iota
	// ThreeDecimals: 0.012.
	ThreeDecimals
)

// Figure is one figure of a run, derived from its Totals.
type Figure struct {
	// Key is its name in report.json (the scenario's "herd" object) and in
	// thresholds ("wakeups_per_release<2").
	Key string
	// Label is the short label of the summary, compare and the dashboard;
	// Long the report.html one. A %s in either is the recipe's unit of
	// work: "acquisition" for locks, "operation" otherwise (Unit).
	Label, Long string
	// Short is the dashboard's label, where width is scarce.
	Short  string
	Format Format
	// Value is the formula over the totals; ok is false when a count it
	// needs is unknown (server counters that could not be read).
	Value func(t Totals) (v float64, ok bool)
	// HandsOut: it applies only to the recipes that hand out something
	// they later release (Recipe.HandsOut); others apply to every recipe.
	HandsOut bool
	// Dashboard: the load dashboard shows it.
	Dashboard bool
	// Headline: a comparison's verdict line names how it changed.
	Headline bool
}

// Keys of the figures other code names.
const (
	WakeupsPerRelease           = "wakeups_per_release"
	ZKRequestsPerAcquisition    = "zk_requests_per_acquisition"
	ServerPacketsPerAcquisition = "server_packets_per_acquisition"
	WatchFanoutPerAcquisition   = "watch_fanout_per_acquisition"
)

// Recipe is what the figures need of a recipe (scenarios.Recipe.Figures
// gives it): its name, and whether it hands out something it later
// releases (a lock, a lease, a leadership): the herd figures apply to it,
// and its unit of work is an acquisition.
type Recipe struct {
	Name     string
	HandsOut bool
}

// all is the one list of figures, in the order they are shown.
var all = []Figure{
	{Key: WakeupsPerRelease, Label: "wake-ups/release", Long: "wake-ups per release", Short: "wake-ups/release",
		Value: per(Wakeups, Releases), HandsOut: true, Dashboard: true, Headline: true},
	{Key: ZKRequestsPerAcquisition, Label: "zk requests/%s", Long: "ZooKeeper requests per %s", Short: "zk req/op",
		Value: per(ZKRequests, Operations), Dashboard: true},
	{Key: ServerPacketsPerAcquisition, Label: "server packets/%s", Long: "server packets per %s", Short: "server pkts/op",
		Value: per(ServerPackets, Operations), Dashboard: true, Headline: true},
	{Key: WatchFanoutPerAcquisition, Label: "watch fan-out/%s", Long: "watch fan-out per %s", Short: "fan-out/op",
		Value: per(WatchFanout, Operations), HandsOut: true},
	{Key: "sessions_opened_per_s", Label: "sessions opened/s", Long: "sessions opened per second", Short: "sessions/s",
		Value: func(t Totals) (float64, bool) {
			v, ok := per(SessionsOpened, WindowMs)(t)
			return 1000 * v, ok
		}, Dashboard: true},
}

// per is n per d: 0 when d is 0, unknown when either is.
func per(n, d Count) func(Totals) (float64, bool) {
	return func(t Totals) (float64, bool) {
		nv, ok1 := t[n]
		dv, ok2 := t[d]
		if !ok1 || !ok2 {
			return 0, false
		}
		if dv <= 0 {
			return 0, true
		}
		return float64(nv) / float64(dv), true
	}
}

// All returns every figure, in the order they are shown.
func All() []Figure { return slices.Clone(all) }

// Counts returns every raw count.
func Counts() []CountSpec { return slices.Clone(counts) }

// Lookup returns the figure called key.
func Lookup(key string) (Figure, bool) {
	i := slices.IndexFunc(all, func(f Figure) bool { return f.Key == key })
	if i < 0 {
		return Figure{}, false
	}
	return all[i], true
}

// Keys lists every figure's key.
func Keys() []string {
	ks := make([]string, len(all))
	for i, f := range all {
		ks[i] = f.Key
	}
	return ks
}

// For returns the figures that apply to recipe.
func For(recipe Recipe) []Figure {
	var out []Figure
	for _, f := range all {
		if f.AppliesTo(recipe) {
			out = append(out, f)
		}
	}
	return out
}

// AppliesTo reports whether the figure is one of recipe's.
func (f Figure) AppliesTo(recipe Recipe) bool { return !f.HandsOut || recipe.HandsOut }

// Unit is the unit of work of recipe that labels name: "acquisition" for
// the recipes that hold something, "operation" otherwise.
func Unit(recipe Recipe) string {
	if recipe.HandsOut {
		return "acquisition"
	}
	return "operation"
}

// LabelFor is the figure's short label for recipe.
func (f Figure) LabelFor(recipe Recipe) string { return withUnit(f.Label, recipe) }

// LongFor is the figure's report.html label for recipe.
func (f Figure) LongFor(recipe Recipe) string { return withUnit(f.Long, recipe) }

func withUnit(label string, recipe Recipe) string {
	if !strings.Contains(label, "%s") {
		return label
	}
	return fmt.Sprintf(label, Unit(recipe))
}

// Unknown is a figure's value in report.json when it is not known.
const Unknown = -1.0

// Of returns the figure's value over t, Unknown when it is not known.
func (f Figure) Of(t Totals) float64 {
	v, ok := f.Value(t)
	if !ok {
		return Unknown
	}
	return v
}

// Values computes every figure over t, by key (Unknown where not known).
func Values(t Totals) map[string]float64 {
	out := make(map[string]float64, len(all))
	for _, f := range all {
		out[f.Key] = f.Of(t)
	}
	return out
}

// Get returns the figure key's value over t, Unknown when it is not known
// or there is no such figure.
func Get(t Totals, key string) float64 {
	f, ok := Lookup(key)
	if !ok {
		return Unknown
	}
	return f.Of(t)
}
