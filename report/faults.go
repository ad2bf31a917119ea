package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/zkherd/zkherd/faults"
	"github.com/zkherd/zkherd/internal/format"
	"github.com/zkherd/zkherd/loadgen"
)

// Faults is what a scenario's faults did and what they cost.
type Faults struct {
	// Occurrences counts faults carried out; Skipped those that could not
	// be (Problems says why, for the first few).
	Occurrences        int `json:"occurrences"`
	Skipped            int `json:"skipped"`
	SessionsExpired    int `json:"sessions_expired"`
	LeaderKills        int `json:"leader_kills"`
	MemberKills        int `json:"member_kills"`
	Pauses             int `json:"pauses"`
	ConnectionsCut     int `json:"connections_cut"`
	CutsOnCreate       int `json:"cuts_on_create"`
	CutsOnDelete       int `json:"cuts_on_delete"`
	CutsOnSetData      int `json:"cuts_on_set_data,omitempty"`
	CutsOnMulti        int `json:"cuts_on_multi,omitempty"`
	ConnectionsDropped int `json:"connections_dropped"`
	Delays             int `json:"delays"`
	// Lags counts lag-member occurrences, LagSeconds their total time.
	Lags       int     `json:"lags,omitempty"`
	LagSeconds float64 `json:"lag_s,omitempty"`
	// ForeignDeletes and ForeignWrites count nodes another client deleted
	// or wrote to; ForeignRefused its writes an ACL refused.
	ForeignDeletes int `json:"foreign_deletes,omitempty"`
	ForeignWrites  int `json:"foreign_writes,omitempty"`
	ForeignRefused int `json:"foreign_refused,omitempty"`
	// ClientPauses counts clients paused (pause-client), ClientPauseSeconds
	// their total time paused.
	ClientPauses       int      `json:"client_pauses,omitempty"`
	ClientPauseSeconds float64  `json:"client_pause_s,omitempty"`
	SessionTimeoutMs   float64  `json:"session_timeout_ms"`
	Problems           []string `json:"problems,omitempty"`
	// Recovery sums up how long things took to come back after the faults.
	Recovery []Recovery `json:"recovery,omitempty"`
}

// newFaults turns a run's faults summary into the report's: durations in
// milliseconds or seconds. nil for a run without faults.
func newFaults(s *faults.Summary) *Faults {
	if s == nil {
		return nil
	}
	f := &Faults{
		Occurrences: s.Occurrences, Skipped: s.Skipped, SessionsExpired: s.SessionsExpired,
		LeaderKills: s.LeaderKills, MemberKills: s.MemberKills, Pauses: s.Pauses,
		ConnectionsCut: s.ConnectionsCut, CutsOnCreate: s.CutsOnCreate, CutsOnDelete: s.CutsOnDelete,
		CutsOnSetData: s.CutsOnSetData, CutsOnMulti: s.CutsOnMulti,
		ConnectionsDropped: s.ConnectionsDropped, Delays: s.Delays,
		Lags: s.Lags, LagSeconds: s.LagTime.Seconds(),
		ForeignDeletes: s.ForeignDeletes, ForeignWrites: s.ForeignWrites, ForeignRefused: s.ForeignRefused,
		ClientPauses: s.ClientPauses, ClientPauseSeconds: s.ClientPauseTime.Seconds(),
		SessionTimeoutMs: ms(s.SessionTimeout), Problems: s.Problems,
	}
	for _, st := range s.Stats() {
		f.Recovery = append(f.Recovery, Recovery{
			What: st.What, Description: faults.Describe(st.What), Count: st.Count, Recovered: st.Recovered,
			MeanMs: ms(st.Mean), P50Ms: ms(st.P50), MaxMs: ms(st.Max),
		})
	}
	return f
}

// newFencing turns a run's fencing figures into the report's: sessions in
// hex, overlap times in seconds since the metrics' start. nil for a run
// without guarded resources.
func newFencing(res *loadgen.Result) *Fencing {
	s := res.Fencing
	if s == nil {
		return nil
	}
	fe := &Fencing{Writes: s.Writes, Rejected: s.Rejected, WriteErrors: s.WriteErrors, OverlapCount: s.OverlapCount, IgnoreLost: s.IgnoreLost}
	start := res.Start
	if res.Metrics != nil {
		start = res.Metrics.Start
	}
	for _, o := range s.Overlaps {
		fe.Overlaps = append(fe.Overlaps, Overlap{
			Lock: o.Lock, StaleToken: o.StaleToken, NewerToken: o.NewerToken,
			StaleSession: fmt.Sprintf("0x%x", o.StaleSession), NewerSession: fmt.Sprintf("0x%x", o.NewerSession),
			T: float64(o.At.Sub(start).Milliseconds()) / 1000, Rejected: o.Rejected, StaleLost: o.StaleLost,
		})
	}
	return fe
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Recovery sums up one kind of recovery measure.
type Recovery struct {
	// What is measured: lock_back, holder_back, ensemble_leader_back,
	// throughput_back; Description says it in words.
	What        string `json:"what"`
	Description string `json:"description"`
	// Count faults measured, Recovered of which came back before the end.
	Count     int     `json:"count"`
	Recovered int     `json:"recovered"`
	MeanMs    float64 `json:"mean_ms"`
	P50Ms     float64 `json:"p50_ms"`
	MaxMs     float64 `json:"max_ms"`
}

// Fencing is what the guarded resources of a scenario's locks saw: every
// grant writes its fencing token, and a write with a token lower than one
// already written is rejected.
type Fencing struct {
	Writes   int64 `json:"writes"`
	Rejected int64 `json:"rejected"`
	// WriteErrors counts writes to a shared guarded znode whose outcome is
	// unknown (a distributed run).
	WriteErrors int64 `json:"write_errors,omitempty"`
	// OverlapCount counts holders that kept working after the next holder
	// was granted the lock; Overlaps lists the first ones.
	OverlapCount int64     `json:"overlap_count"`
	Overlaps     []Overlap `json:"overlaps,omitempty"`
	// IgnoreLost is set when holders ignored Lost() on purpose: overlaps
	// are then expected and caught, not violations.
	IgnoreLost bool `json:"ignore_lost"`
}

// Overlap is a holder still writing after the next one was granted.
type Overlap struct {
	Lock         string  `json:"lock"`
	StaleToken   uint64  `json:"stale_token"`
	NewerToken   uint64  `json:"newer_token"`
	StaleSession string  `json:"stale_session"`
	NewerSession string  `json:"newer_session"`
	T            float64 `json:"t_s"`
	Rejected     int64   `json:"rejected_writes"`
	// StaleLost says whether the stale holder had been told it lost.
	StaleLost bool `json:"stale_lost"`
}

func (o Overlap) String() string {
	told := "before it was told"
	if o.StaleLost {
		told = "ignoring Lost()"
	}
	return fmt.Sprintf("%s at %.1fs: token %d (session %s) still writing after token %d (session %s) was granted, %s; %d stale write(s) rejected",
		lastPathElem(o.Lock), o.T, o.StaleToken, o.StaleSession, o.NewerToken, o.NewerSession, told, o.Rejected)
}

func lastPathElem(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

// faultItems sums up the faults for the summary and the HTML.
func (f *Faults) items() []kv {
	out := []kv{{"faults carried out", format.Count(int64(f.Occurrences))}}
	add := func(k string, n int) {
		if n > 0 {
			out = append(out, kv{k, format.Count(int64(n))})
		}
	}
	add("sessions expired", f.SessionsExpired)
	add("leader kills", f.LeaderKills)
	add("member kills", f.MemberKills)
	add("members paused", f.Pauses)
	add("connections cut", f.ConnectionsCut)
	add("cut right after a create", f.CutsOnCreate)
	add("cut right after a delete", f.CutsOnDelete)
	add("cut right after a setData", f.CutsOnSetData)
	add("cut right after a multi", f.CutsOnMulti)
	add("connections silenced", f.ConnectionsDropped)
	add("delays", f.Delays)
	if f.Lags > 0 {
		out = append(out, kv{"members lagged", fmt.Sprintf("%d (%.0f s in all)", f.Lags, f.LagSeconds)})
	}
	if f.ClientPauses > 0 {
		out = append(out, kv{"clients paused", fmt.Sprintf("%d (%.0f s in all)", f.ClientPauses, f.ClientPauseSeconds)})
	}
	add("nodes deleted by another client", f.ForeignDeletes)
	add("nodes written by another client", f.ForeignWrites)
	add("foreign writes refused by ACLs", f.ForeignRefused)
	add("not carried out", f.Skipped)
	return out
}

// line writes a recovery measure for the terminal and the HTML.
func (r Recovery) line() string {
	return fmt.Sprintf("%s: %d of %d, median %s, mean %s, max %s", r.Description, r.Recovered, r.Count,
		format.Ms(r.P50Ms), format.Ms(r.MeanMs), format.Ms(r.MaxMs))
}

func (f *Fencing) items() []kv {
	out := []kv{
		{"writes accepted", format.Count(f.Writes)},
		{"stale writes rejected", format.Count(f.Rejected)},
		{"overlapping holders", format.Count(f.OverlapCount)},
	}
	if f.IgnoreLost {
		out = append(out, kv{"holders", "ignore Lost() (zombies): overlaps are caught, not violations"})
	}
	return out
}

// writeFaults prints a scenario's faults and fencing in the terminal
// summary.
func writeFaults(w io.Writer, s *Scenario) {
	if f := s.Faults; f != nil {
		var items []string
		for _, it := range f.items() {
			items = append(items, it.Key+" "+it.Value)
		}
		fmt.Fprint(w, wrapItems("faults: ", items, widthOf(w)))
		for _, r := range f.Recovery {
			fmt.Fprint(w, wrapLine("  recovery: ", r.line(), widthOf(w)))
		}
		if f.SessionTimeoutMs > 0 {
			fmt.Fprint(w, wrapLine("  ", fmt.Sprintf("(session timeout %s: what a crashed holder's lock stays unavailable)", format.Ms(f.SessionTimeoutMs)), widthOf(w)))
		}
	}
	if fe := s.Fencing; fe != nil {
		var items []string
		for _, it := range fe.items() {
			items = append(items, it.Key+" "+it.Value)
		}
		fmt.Fprint(w, wrapItems("fencing: ", items, widthOf(w)))
		for _, o := range fe.Overlaps {
			fmt.Fprint(w, wrapLine("  overlap: ", o.String(), widthOf(w)))
		}
	}
}

// faultsView fills the HTML's fault and fencing sections.
func faultsView(v *scenarioView, s *Scenario) {
	if f := s.Faults; f != nil {
		v.Faults = f.items()
		for _, r := range f.Recovery {
			v.Recovery = append(v.Recovery, recoveryRow{
				What: r.Description, Count: format.Count(int64(r.Count)), Recovered: format.Count(int64(r.Recovered)),
				P50: format.Ms(r.P50Ms), Mean: format.Ms(r.MeanMs), Max: format.Ms(r.MaxMs),
			})
		}
		if f.SessionTimeoutMs > 0 {
			v.SessionTimeout = format.Ms(f.SessionTimeoutMs)
		}
	}
	if fe := s.Fencing; fe != nil {
		v.Fencing = fe.items()
		for _, o := range fe.Overlaps {
			v.Overlaps = append(v.Overlaps, o.String())
		}
	}
}

type recoveryRow struct{ What, Count, Recovered, P50, Mean, Max string }
