// Package load is the load dashboard: for each scenario of a run, clients
// and sessions, operations and throughput over time, latency percentiles
// and histogram per phase, errors, the herd meter (wake-ups per release),
// the waiter chain and queue depth of what is under test, with injected
// faults marked. Two scenarios (herd vs fair) are drawn side by side.
//
// The view only renders the latest loadview.Snapshot it was given: drawing
// a frame costs the same with 10 or 10,000 clients.
package load

import (
	"fmt"
	"math"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/components/histogram"
	"github.com/zkherd/zkherd/tui/components/sparkline"
	"github.com/zkherd/zkherd/tui/loadview"
)

// Model is the load dashboard.
type Model struct {
	common.Common
	snap *loadview.Snapshot
	// phase picks which phase's histogram is drawn (tab cycles).
	phase int
}

// New returns an empty dashboard.
func New(c common.Common) Model { return Model{Common: c} }

// Title names the view in the tab bar.
func (m Model) Title() string { return "Load" }

// ShortHelp lists the view's own keys for the help bar.
func (m Model) ShortHelp() []key.Binding {
	return []key.Binding{key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next phase"))}
}

// SetSize sets the view's size.
func (m *Model) SetSize(width, height int) { m.Common.SetSize(width, height) }

// Snapshot is the snapshot shown (nil before the first).
func (m Model) Snapshot() *loadview.Snapshot { return m.snap }

// Update takes new snapshots; tab cycles the histogram's phase.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case common.LoadMsg:
		m.snap = msg.Snapshot
	case tea.KeyPressMsg:
		if key.Matches(msg, m.KeyMap.NextPane) {
			m.phase++
		}
		if key.Matches(msg, m.KeyMap.PrevPane) {
			m.phase = max(m.phase-1, 0)
		}
	}
	return m, nil
}

// View draws the dashboard, exactly Height lines.
func (m Model) View() string {
	if m.snap == nil {
		return common.Lines("waiting for the load run to start…", m.Width, m.Height)
	}
	s := m.snap
	lines := []string{common.Fit(m.header(), m.Width)}
	footer := m.footer()
	bodyH := max(m.Height-1-len(footer), 0)
	switch n := len(s.Scenarios); {
	case n == 0:
		lines = append(lines, common.Lines("no scenario started yet", m.Width, bodyH))
	case n == 2 && m.Width >= 60:
		w := (m.Width - 1) / 2
		herdMax := herdScale(s.Scenarios)
		left := m.scenario(&s.Scenarios[0], w, bodyH, herdMax)
		right := m.scenario(&s.Scenarios[1], m.Width-w-1, bodyH, herdMax)
		sep := m.Styles.Dim.Render("│")
		for i := 0; i < bodyH; i++ {
			lines = append(lines, left[i]+sep+right[i])
		}
	default:
		// One above the other, sharing the height.
		herdMax := herdScale(s.Scenarios)
		per := bodyH / n
		for i := range s.Scenarios {
			h := per
			if i == n-1 {
				h = bodyH - per*(n-1)
			}
			lines = append(lines, m.scenario(&s.Scenarios[i], m.Width, h, herdMax)...)
		}
	}
	lines = append(lines, footer...)
	return common.Lines(strings.Join(lines, "\n"), m.Width, m.Height)
}

func (m Model) header() string {
	s := m.snap
	parts := []string{m.Styles.Title.Render("Load") + "  " + s.Title}
	if s.RunID != "" {
		parts = append(parts, "run "+s.RunID)
	}
	clock := common.Clock(s.Elapsed)
	if s.Duration > 0 {
		clock += " / " + common.Clock(s.Duration)
	}
	parts = append(parts, clock)
	switch {
	case s.Done && s.Partial:
		parts = append(parts, m.Styles.Warn.Render("stopped early (partial)"))
	case s.Done:
		parts = append(parts, m.Styles.OK.Render("done"))
	}
	if s.Server != "" {
		parts = append(parts, s.Server)
	}
	return strings.Join(parts, " · ")
}

// footer is the fault list and the latest notice, one line each.
func (m Model) footer() []string {
	s := m.snap
	var out []string
	if len(s.Faults) > 0 {
		parts := make([]string, 0, len(s.Faults))
		for _, f := range s.Faults {
			parts = append(parts, common.Clock(f.At)+" "+f.What)
		}
		// The newest faults matter most: keep the tail that fits.
		line := "faults ▲ " + strings.Join(parts, " · ")
		out = append(out, common.TruncateLeft(m.Styles.Warn.Render(line), m.Width))
	}
	if n := len(s.Notices); n > 0 {
		out = append(out, common.Fit(s.Notices[n-1], m.Width))
	}
	return out
}

// herdScale is the wake-ups per release that fills the herd meter: the
// largest client count, so a herd of everyone fills it.
func herdScale(scs []loadview.Scenario) float64 {
	top := 10.0
	for _, sc := range scs {
		top = math.Max(top, float64(sc.Clients))
		top = math.Max(top, sc.Herd.WakeupsPerRelease)
	}
	return top
}

// scenario renders one scenario into exactly h lines of w cells.
func (m Model) scenario(sc *loadview.Scenario, w, h int, herdMax float64) []string {
	st := m.Styles
	var top, tail []string
	add := func(dst *[]string, s string) { *dst = append(*dst, common.Fit(s, w)) }

	title := st.Title.Render(sc.Name)
	if sc.Recipe != "" && sc.Recipe != sc.Name {
		title += " (" + sc.Recipe + ")"
	}
	if sc.State != "" {
		title += " · " + sc.State
	}
	add(&top, title)
	rate := 0.0
	if n := len(sc.Throughput); n > 0 {
		rate = sc.Throughput[n-1]
	}
	counts := fmt.Sprintf("clients %s · sessions alive %s", common.Count(int64(sc.Clients)), common.Count(int64(sc.SessionsAlive)))
	if len(counts) > w {
		counts = fmt.Sprintf("clients %s · alive %s", common.Count(int64(sc.Clients)), common.Count(int64(sc.SessionsAlive)))
	}
	add(&top, counts)
	add(&top, fmt.Sprintf("ops %s · now %s/s", common.Count(sc.Ops), common.Rate(rate)))
	sparkW := max(w-11, 1)
	add(&top, "ops/s     "+st.Spark.Render(sparkline.Render(sc.Throughput, sparkW, 0)))
	if marks := m.faultMarks(sc, sparkW); marks != "" {
		add(&top, "          "+st.Warn.Render(marks))
	}
	top = append(top, m.phaseTable(sc.Phases, w)...)
	// The herd meter.
	wake := sc.Herd.WakeupsPerRelease
	value := fmtFloat(wake)
	meterW := max(w-len("wake-ups/release ")-len(value)-1, 4)
	meter := herdBar(wake, herdMax, meterW)
	wakeStyle := st.OK
	if wake >= float64(inspect.DefaultHerdThreshold) {
		wakeStyle = st.Bad
	}
	add(&tail, "wake-ups/release "+value+" "+wakeStyle.Render(meter))
	add(&tail, fmt.Sprintf("pkts/acq %s · zk req/acq %s",
		fmtFloat(sc.Herd.PacketsPerAcquisition), fmtFloat(sc.Herd.ZKRequestsPerAcquisition)))
	if sc.ErrorsTotal > 0 {
		parts := make([]string, 0, len(sc.Errors))
		for _, e := range sc.Errors {
			parts = append(parts, fmt.Sprintf("%s %s", e.Kind, common.Count(e.Count)))
		}
		add(&tail, st.Bad.Render("errors "+common.Count(sc.ErrorsTotal))+" "+strings.Join(parts, ", "))
	} else {
		add(&tail, "errors 0")
	}
	for _, v := range sc.Violations {
		add(&tail, st.Bad.Render("✗ "+v))
	}
	if len(sc.QueueDepth) > 0 {
		last := sc.QueueDepth[len(sc.QueueDepth)-1]
		label := fmt.Sprintf("depth %-5s", common.Count(int64(last)))
		add(&tail, label+st.Spark.Render(sparkline.Render(sc.QueueDepth, max(w-len(label), 1), 0)))
	}
	// What is left goes to the chain and the histogram.
	left := h - len(top) - len(tail)
	var middle []string
	if sc.Lock != nil && left >= 3 {
		rows := min(len(sc.Lock.Entries), max(left/3, 2))
		middle = append(middle, m.chainLines(sc.Lock, w, rows)...)
		left -= len(middle)
	}
	// Histograms of the chosen phase, then of the next ones while they fit.
	for i := 0; i < len(sc.Phases) && left >= 2; i++ {
		if i > 0 && left < 6 {
			break
		}
		p := sc.Phases[(m.phase+i)%len(sc.Phases)]
		var rows []string
		if len(p.Buckets) > 0 {
			rows = append(rows, common.Fit(st.Label.Render(p.Name+" latency (tab: phase)"), w))
			rows = append(rows, histogram.Render(p.Buckets, w, min(left-1, 10))...)
		} else {
			rows = append(rows, common.Fit(st.Label.Render(p.Name+" percentiles (tab: phase)"), w))
			rows = append(rows, histogram.Spectrum(p, w, min(left-1, 5))...)
		}
		middle = append(middle, rows...)
		left -= len(rows)
	}
	out := append(append(top, middle...), tail...)
	if len(out) > h {
		out = out[:h]
	}
	blank := strings.Repeat(" ", max(w, 0))
	for len(out) < h {
		out = append(out, blank)
	}
	return out
}

// phaseTable is a percentile line per phase: p50, p99 and max at 40
// columns, with p90 and p99.9 from 56.
func (m Model) phaseTable(phases []loadview.Phase, w int) []string {
	if len(phases) == 0 {
		return []string{common.Fit("latency: no samples yet", w)}
	}
	wide := w >= 56
	withCount := w >= 46
	cellW, labelW := 8, 10
	if w >= 56 {
		for _, p := range phases {
			labelW = min(max(labelW, len(p.Name)+1), 15)
		}
	}
	if w < 36 {
		cellW, labelW = 7, 8
	}
	cell := func(s string) string { return common.FitRight(s, cellW) }
	head := common.Fit("phase", labelW) + cell("p50")
	if wide {
		head += cell("p90")
	}
	head += cell("p99")
	if wide {
		head += cell("p99.9")
	}
	head += cell("max")
	if withCount {
		head += cell("count")
	}
	out := []string{common.Fit(m.Styles.Header.Render(ansi.Strip(head)), w)}
	for _, p := range phases {
		row := common.Fit(p.Name, labelW) + cell(common.Duration(p.P50))
		if wide {
			row += cell(common.Duration(p.P90))
		}
		row += cell(common.Duration(p.P99))
		if wide {
			row += cell(common.Duration(p.P999))
		}
		row += cell(common.Duration(p.Max))
		if withCount {
			row += cell(shortCount(p.Count))
		}
		out = append(out, common.Fit(row, w))
	}
	return out
}

// chainLines draws the head of the lock under test: a summary line and
// rows-1 contenders.
func (m Model) chainLines(l *inspect.Lock, w, rows int) []string {
	st := m.Styles
	head := fmt.Sprintf("chain: %d holding → %s waiting", l.Holders(), common.Count(int64(l.Waiters())))
	if len(l.Anomalies) > 0 {
		head += " " + st.Bad.Render("! "+l.Anomalies[0].Kind.String())
	}
	head += " · " + l.Path
	out := []string{common.Fit(head, w)}
	show := min(len(l.Entries), rows-1)
	if show < len(l.Entries) && show > 1 {
		show-- // room for the "… more" line
	}
	for i := 0; i < show; i++ {
		e := &l.Entries[i]
		role := "wait"
		if e.Role == inspect.RoleHolder {
			role = "HOLD"
		}
		arrow := "  └▶"
		if i == 0 {
			arrow = "  ┌ "
		}
		watch := ""
		if e.Role == inspect.RoleWaiter {
			switch {
			case len(e.Watching) == 0:
				watch = st.Bad.Render(" ! no watch")
			case e.Flags.Has(inspect.AnomalyWrongWatch):
				watch = st.Bad.Render(" ! watches " + inspect.ShortName(e.Watching[0]))
			default:
				watch = " → " + inspect.ShortName(e.Watching[0])
			}
		}
		node := inspect.ShortName(e.Node)
		if node == "" {
			node = inspect.SessionHex(e.Session)
		}
		out = append(out, common.Fit(fmt.Sprintf("%s%s %s %s%s", arrow, role, node, common.Duration(e.Age), watch), w))
	}
	if rest := len(l.Entries) - show; rest > 0 {
		out = append(out, common.Fit(fmt.Sprintf("  … %s more", common.Count(int64(rest))), w))
	}
	return out
}

// faultMarks puts ▲ under the throughput sparkline where faults happened.
func (m Model) faultMarks(sc *loadview.Scenario, width int) string {
	if len(m.snap.Faults) == 0 || len(sc.Throughput) == 0 {
		return ""
	}
	n := len(sc.Throughput)
	first := max(n-width, 0) // index of the first value shown
	pad := max(width-n, 0)   // blank cells before it
	marks := []rune(strings.Repeat(" ", width))
	any := false
	for _, f := range m.snap.Faults {
		i := int((f.At - sc.Started) / time.Second)
		if i < first || i >= n {
			continue
		}
		marks[pad+i-first] = '▲'
		any = true
	}
	if !any {
		return ""
	}
	return string(marks)
}

// herdBar draws v on a log scale up to top, so that 1 wake-up per release
// is a sliver and a herd of thousands fills the meter.
func herdBar(v, top float64, width int) string {
	if width <= 0 {
		return ""
	}
	frac := 0.0
	if v > 0 && top > 1 {
		frac = math.Log10(v+1) / math.Log10(top+1)
	}
	n := int(math.Round(min(frac, 1) * float64(width)))
	return strings.Repeat("█", n) + strings.Repeat("░", width-n)
}

func fmtFloat(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 1000:
		return fmt.Sprintf("%.1f", v)
	}
	return common.Count(int64(v + 0.5))
}

// shortCount keeps counts within a table cell: 12,345 → 12.3k.
func shortCount(n int64) string {
	switch {
	case n < 100000:
		return common.Count(n)
	case n < 10000000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}
