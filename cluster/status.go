package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/zkherd/zkherd/fourlw"
	"github.com/zkherd/zkherd/internal/inert"
	"github.com/zkherd/zkherd/internal/usermsg"
)

// Status is one poll of every member of an ensemble. Its JSON form is
// what `zkherd cluster status -o json` prints.
type Status struct {
	Members []MemberStatus `json:"members"`
	Up      int            `json:"up"`
	Leaders int            `json:"leaders"`
	// Healthy: every member answers and exactly one leads.
	Healthy bool `json:"healthy"`
	// Problem says, in one line, why the ensemble is not healthy.
	Problem string        `json:"problem,omitempty"`
	Admin   []AdminStatus `json:"admin_interfaces"`
}

// ModeNotServing is the Mode of a member that answers but serves no
// requests: it is electing a leader, or cut off from the quorum.
const ModeNotServing = "not-serving"

// MemberStatus is one member's figures (srvr and mntr); the numbers are
// absent when it is down or did not answer that command.
type MemberStatus struct {
	ID          int      `json:"id"`
	Address     string   `json:"address"`
	Up          bool     `json:"up"` // answers (Mode says whether it serves)
	Error       string   `json:"error,omitempty"`
	Mode        string   `json:"mode,omitempty"`
	Zxid        string   `json:"zxid,omitempty"`
	Connections *int64   `json:"connections,omitempty"`
	Znodes      *int64   `json:"znodes,omitempty"`
	Watches     *int64   `json:"watches,omitempty"`
	Ephemerals  *int64   `json:"ephemerals,omitempty"`
	Outstanding *int64   `json:"outstanding_requests,omitempty"`
	LatencyMs   *Latency `json:"latency_ms,omitempty"`
}

// Latency is a server's request latency since its start, in ms.
type Latency struct {
	Min int64   `json:"min"`
	Avg float64 `json:"avg"`
	Max int64   `json:"max"`
}

// AdminStatus says which admin interfaces of one member answer.
type AdminStatus struct {
	Member    string `json:"member"`
	Reachable bool   `json:"reachable"`
	// FourLW lists the four-letter words that answer, Refused those the
	// whitelist refuses.
	FourLW  []string `json:"four_letter_words"`
	Refused []string `json:"refused,omitempty"`
	// Unanswered lists those that failed otherwise (no answer, TLS).
	Unanswered []string `json:"unanswered,omitempty"`
	// AdminServer is the AdminServer's URL when it answers.
	AdminServer string `json:"admin_server,omitempty"`
}

// Poll asks every member once (srvr and mntr, each bounded by timeout),
// then probes the admin interfaces of the members that answered: twelve
// commands in a row, so the probe gets three times timeout (a member that
// did not answer is not probed: it would only use up the time).
func Poll(ctx context.Context, members []fourlw.Member, timeout time.Duration) Status {
	pctx, cancel := context.WithTimeout(ctx, timeout+time.Second)
	snap := fourlw.PollOnce(pctx, members, fourlw.WithTimeout(timeout), fourlw.WithCommands(fourlw.CmdSrvr, fourlw.CmdMntr))
	cancel()
	caps := make(fourlw.Capabilities, len(members))
	var wg sync.WaitGroup
	for i, m := range snap.Members {
		if !m.Up && !errors.Is(m.Err, fourlw.ErrNotServing) {
			caps[i] = fourlw.MemberCapabilities{Member: members[i], Err: m.Err}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, 3*timeout)
			defer cancel()
			caps[i] = fourlw.ProbeMember(cctx, members[i])
		}()
	}
	wg.Wait()

	var st Status
	for _, m := range snap.Members {
		ms := MemberStatus{ID: m.Member.ID, Address: m.Member.Addr, Up: m.Up}
		if !m.Up && errors.Is(m.Err, fourlw.ErrNotServing) {
			// Alive, but electing a leader or cut off from the quorum.
			ms.Up, ms.Mode = true, ModeNotServing
			st.Up++
			st.Members = append(st.Members, ms)
			continue
		}
		if !m.Up {
			ms.Error = oneLine(m.Err)
			st.Members = append(st.Members, ms)
			continue
		}
		st.Up++
		ms.Mode = m.Mode()
		if ms.Mode == fourlw.ModeLeader || ms.Mode == fourlw.ModeStandalone {
			st.Leaders++
		}
		if s := m.Stat; s != nil {
			ms.Zxid = s.Zxid.String()
			ms.Connections = ptr(int64(s.Connections))
			ms.Znodes = ptr(s.NodeCount)
			ms.Outstanding = ptr(s.Outstanding)
			ms.LatencyMs = &Latency{Min: s.LatencyMin, Avg: s.LatencyAvg, Max: s.LatencyMax}
		}
		if m.Mntr != nil {
			ms.Watches = ptr(m.Mntr.WatchCount())
			ms.Ephemerals = ptr(m.Mntr.EphemeralsCount())
		}
		st.Members = append(st.Members, ms)
	}
	for _, mc := range caps {
		as := AdminStatus{Member: mc.Member.String(), Reachable: mc.Reachable, FourLW: []string{}}
		for _, c := range mc.Commands {
			var refused *fourlw.ErrNotWhitelisted
			switch {
			case c.FourLW:
				as.FourLW = append(as.FourLW, string(c.Command))
			case errors.As(c.Err, &refused):
				as.Refused = append(as.Refused, string(c.Command))
			default:
				as.Unanswered = append(as.Unanswered, string(c.Command))
			}
		}
		if mc.AdminServer {
			as.AdminServer = mc.Member.AdminURL
		}
		st.Admin = append(st.Admin, as)
	}
	st.Healthy, st.Problem = verdict(st)
	// Modes, zxids and error lines are the servers' text: inert before
	// they reach a terminal (or a JSON reader that prints them).
	inert.All(&st)
	return st
}

// verdict: healthy when every member is up and exactly one leads.
func verdict(st Status) (bool, string) {
	n := len(st.Members)
	var down []string
	for _, m := range st.Members {
		if !m.Up {
			down = append(down, fmt.Sprint(m.ID))
		}
	}
	switch {
	case st.Up == 0:
		return false, "no member answered"
	case len(down) > 0:
		return false, fmt.Sprintf("%d of %d members down (member %s)", len(down), n, strings.Join(down, ", "))
	case st.Leaders == 0:
		return false, "no leader elected: the members are electing, or have no quorum"
	case st.Leaders > 1:
		return false, fmt.Sprintf("%d members claim to lead: the servers named may be of different ensembles", st.Leaders)
	}
	return true, ""
}

func ptr[T any](v T) *T { return &v }

func oneLine(err error) string {
	if err == nil {
		return "no answer"
	}
	return usermsg.Clean(err.Error())
}

// WriteText prints the status table, the verdict and the admin interfaces.
func (st Status) WriteText(out io.Writer) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MEMBER\tADDRESS\tMODE\tZXID\tCONNS\tZNODES\tWATCHES\tEPHEMERALS\tOUTSTANDING\tLATENCY min/avg/max ms")
	num := func(p *int64) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprint(*p)
	}
	for _, m := range st.Members {
		if !m.Up {
			fmt.Fprintf(tw, "%d\t%s\tDOWN\t%s\n", m.ID, m.Address, m.Error)
			continue
		}
		zxid, latency := "-", "-"
		if m.Zxid != "" {
			zxid = m.Zxid
		}
		if l := m.LatencyMs; l != nil {
			latency = fmt.Sprintf("%d/%.1f/%d", l.Min, l.Avg, l.Max)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.ID, m.Address, m.Mode, zxid,
			num(m.Connections), num(m.Znodes), num(m.Watches), num(m.Ephemerals), num(m.Outstanding), latency)
	}
	tw.Flush()
	switch {
	case st.Healthy && len(st.Members) > 1:
		fmt.Fprintf(out, "\n%d of %d members up, one leader.\n", st.Up, len(st.Members))
	case st.Healthy:
	case st.Up > 0:
		fmt.Fprintf(out, "\n%d of %d members up: %s.\n", st.Up, len(st.Members), st.Problem)
	}

	fmt.Fprintln(out, "\nAdmin interfaces:")
	for _, a := range st.Admin {
		if !a.Reachable {
			fmt.Fprintf(out, "  %s: unreachable\n", a.Member)
			continue
		}
		line := fmt.Sprintf("  %s: four-letter words: %d of %d answer", a.Member, len(a.FourLW), len(a.FourLW)+len(a.Refused)+len(a.Unanswered))
		if len(a.Refused) > 0 {
			line += fmt.Sprintf(" (refused: %s; enable with %q in zoo.cfg)", strings.Join(a.Refused, " "), fourlw.ConfigLine)
		}
		if len(a.Unanswered) > 0 {
			line += fmt.Sprintf(" (no answer: %s)", strings.Join(a.Unanswered, " "))
		}
		if a.AdminServer != "" {
			line += "; AdminServer answers at " + a.AdminServer
		} else {
			line += "; AdminServer: no answer (enable with " + fourlw.AdminConfigHint + ")"
		}
		fmt.Fprintln(out, line)
	}
	return nil
}
