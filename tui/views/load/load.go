// Package load is the load dashboard: for each scenario of a run, the lock
// under test as a picture of who waits on whom (the fair lock's chain, the
// herd's fan) and what each release woke; the selected phase's latency
// histogram with p50 and p99 marked; throughput and latency over time with
// injected faults marked; queue depth; errors and failed checks. Two
// scenarios (herd vs fair) are drawn side by side on shared scales.
//
// The view only renders the latest loadview.Snapshot it was given, whose
// size does not grow with the clients: drawing a frame costs the same with
// 10 or 10,000 clients.
package load

import (
	"fmt"
	"math"
	"path"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/zkherd/zkherd/figures"
	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/components/histogram"
	"github.com/zkherd/zkherd/tui/components/sparkline"
	"github.com/zkherd/zkherd/tui/loadview"
)

// Model is the load dashboard.
type Model struct {
	common.Common
	snap *loadview.Snapshot
	// phase names the phase drawn ("" for each scenario's first, its main
	// phase); tab cycles.
	phase  string
	filter string // "/": only the phases (or scenarios) whose name has it
	scroll int    // first waiter shown in the lock pictures
}

// New returns an empty dashboard.
func New(c common.Common) Model { return Model{Common: c} }

// Title names the view in the tab bar.
func (m Model) Title() string { return "Load" }

var (
	phaseKey  = key.NewBinding(key.WithKeys("tab", "shift+tab"), key.WithHelp("tab", "phase"))
	scrollKey = key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓", "waiters"))
)

// ShortHelp lists the view's own keys for the help bar.
func (m Model) ShortHelp() []key.Binding {
	return []key.Binding{phaseKey, scrollKey, key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter phases"))}
}

// SetSize sets the view's size.
func (m *Model) SetSize(width, height int) { m.Common.SetSize(width, height) }

// Snapshot is the snapshot shown (nil before the first).
func (m Model) Snapshot() *loadview.Snapshot { return m.snap }

// Update takes new snapshots; tab cycles the phase drawn, the navigation
// keys scroll the waiters, "/" filters phases, ":phase NAME" picks one.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case common.LoadMsg:
		m.snap = msg.Snapshot
	case common.FilterMsg:
		m.filter = strings.ToLower(msg.Text)
		if names := m.phaseNames(); len(names) > 0 && !slices.Contains(names, m.phase) {
			m.phase = ""
		}
	case common.CommandMsg:
		if msg.Name == "phase" {
			for _, n := range m.allPhaseNames() {
				if n == msg.Arg {
					m.phase = n
					return m, nil
				}
			}
			return m, notice(fmt.Sprintf("no phase %q: %s", msg.Arg, strings.Join(m.allPhaseNames(), ", ")), true)
		}
		return m, notice(fmt.Sprintf("unknown command %q (try :phase acquire, :locks, :q)", msg.Name), true)
	case tea.KeyPressMsg:
		return m.key(msg), nil
	}
	return m, nil
}

func notice(text string, isErr bool) tea.Cmd {
	return func() tea.Msg { return common.NoticeMsg{Text: text, Error: isErr} }
}

func (m Model) key(k tea.KeyPressMsg) Model {
	km := m.KeyMap
	page := max(m.Height/4, 1)
	switch {
	case key.Matches(k, km.NextPane):
		m.phase = m.cyclePhase(1)
	case key.Matches(k, km.PrevPane):
		m.phase = m.cyclePhase(-1)
	case key.Matches(k, km.Up):
		m.scroll--
	case key.Matches(k, km.Down):
		m.scroll++
	case key.Matches(k, km.PageUp):
		m.scroll -= page
	case key.Matches(k, km.PageDown):
		m.scroll += page
	case key.Matches(k, km.Top):
		m.scroll = 0
	case key.Matches(k, km.Bottom):
		m.scroll = loadgen.MaxWaitersShown
	}
	m.scroll = min(max(m.scroll, 0), loadgen.MaxWaitersShown)
	return m
}

// allPhaseNames are the phases of every scenario, in order of appearance.
func (m Model) allPhaseNames() []string {
	var names []string
	if m.snap == nil {
		return nil
	}
	for _, sc := range m.snap.Scenarios {
		for _, p := range sc.Phases {
			if !slices.Contains(names, p.Name) {
				names = append(names, p.Name)
			}
		}
	}
	return names
}

// phaseNames are the phases the filter lets through.
func (m Model) phaseNames() []string {
	return slices.DeleteFunc(m.allPhaseNames(), func(n string) bool { return !m.phaseShown(n) })
}

func (m Model) phaseShown(name string) bool {
	return m.filter == "" || strings.Contains(name, m.filter) || !m.filterMatchesPhase()
}

// filterMatchesPhase: a filter that matches no phase picks scenarios.
func (m Model) filterMatchesPhase() bool {
	for _, n := range m.allPhaseNames() {
		if strings.Contains(n, m.filter) {
			return true
		}
	}
	return false
}

func (m Model) cyclePhase(step int) string {
	names := m.phaseNames()
	if len(names) == 0 {
		return m.phase
	}
	i := slices.Index(names, m.phase)
	if i < 0 {
		i = 0
		if len(m.snap.Scenarios) > 0 {
			if p, ok := m.selected(&m.snap.Scenarios[0]); ok {
				i = max(slices.Index(names, p.Name), 0)
			}
		}
	}
	return names[(i+step+len(names))%len(names)]
}

// selected is the phase drawn for sc.
func (m Model) selected(sc *loadview.Scenario) (loadview.Phase, bool) {
	for _, p := range sc.Phases {
		if m.phaseShown(p.Name) && (m.phase == "" || p.Name == m.phase) {
			return p, true
		}
	}
	return loadview.Phase{}, false
}

// scenarios are the scenarios shown: all, or those a filter that matches
// no phase names.
func (m Model) scenarios() []*loadview.Scenario {
	var out []*loadview.Scenario
	for i := range m.snap.Scenarios {
		sc := &m.snap.Scenarios[i]
		if m.filter == "" || m.filterMatchesPhase() || strings.Contains(strings.ToLower(sc.Name), m.filter) {
			out = append(out, sc)
		}
	}
	return out
}

// View draws the dashboard, exactly Height lines.
func (m Model) View() string {
	if m.snap == nil {
		return common.Lines("waiting for the load run to start…", m.Width, m.Height)
	}
	lines := []string{common.Fit(m.header(), m.Width)}
	footer := m.footer()
	bodyH := max(m.Height-1-len(footer), 0)
	scs := m.scenarios()
	switch n := len(scs); {
	case n == 0:
		msg := "no scenario started yet"
		if len(m.snap.Scenarios) > 0 {
			msg = fmt.Sprintf("nothing matches the filter %q (esc clears it)", m.filter)
		}
		lines = append(lines, common.Lines(msg, m.Width, bodyH))
	case n == 2 && m.Width >= 60:
		w := (m.Width - 1) / 2
		ws := []int{w, m.Width - w - 1}
		panels := m.panels(scs, ws, bodyH)
		sep := m.Styles.Dim.Render("│")
		for i := 0; i < bodyH; i++ {
			lines = append(lines, panels[0][i]+sep+panels[1][i])
		}
	default:
		// One above the other, sharing the height.
		per := bodyH / n
		for i, sc := range scs {
			h := per
			if i == n-1 {
				h = bodyH - per*(n-1)
			}
			lines = append(lines, m.panels([]*loadview.Scenario{sc}, []int{m.Width}, h)[0]...)
		}
	}
	lines = append(lines, footer...)
	return common.Lines(strings.Join(lines, "\n"), m.Width, m.Height)
}

func (m Model) header() string {
	s := m.snap
	head := m.Styles.Title.Render("Load") + "  " + s.Title
	if s.Done {
		// What the user needs now: that it is over, and where the
		// report goes.
		state := m.Styles.OK.Render("finished")
		if s.Partial {
			state = m.Styles.Warn.Render("stopped early (partial)")
		}
		head += " · " + state + " after " + common.Clock(s.Elapsed) + " · "
		what := "q prints the summary"
		if s.Report != "" {
			what = "q writes the report: "
			room := m.Width - common.Width(head) - common.Width(what)
			what += common.TruncateLeft(s.Report, max(room, 12))
		}
		return head + what
	}
	parts := []string{head, common.Clock(s.Elapsed)}
	if s.Duration > 0 {
		parts[1] += " / " + common.Clock(s.Duration)
	}
	if s.RunID != "" {
		parts = append(parts, "run "+s.RunID)
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

// scales are what the panels drawn together share.
type scales struct {
	ops     float64 // ops/s that fills a sparkline cell
	latency float64 // ms that fills a latency cell (p50 and p99 alike)
	depth   float64
	wake    float64 // wake-ups per release that fill the meter
	hist    histogram.Scale
}

func (m Model) scalesOf(scs []*loadview.Scenario, histRows, plotW int) scales {
	var s scales
	var phases []loadview.Phase
	for _, sc := range scs {
		for _, v := range tail(sc.Throughput, plotW) {
			s.ops = math.Max(s.ops, v)
		}
		for _, v := range tail(sc.QueueDepth, plotW) {
			s.depth = math.Max(s.depth, v)
		}
		s.wake = math.Max(s.wake, float64(sc.Clients))
		if p, ok := m.selected(sc); ok {
			phases = append(phases, p)
			for _, d := range tail(p.P99s, plotW) {
				s.latency = math.Max(s.latency, ms(d))
			}
		}
	}
	s.wake = math.Max(s.wake, 10)
	s.hist = histogram.ScaleOf(histRows, phases...)
	return s
}

func tail[T any](xs []T, n int) []T {
	n = max(n, 0)
	if len(xs) > n {
		return xs[len(xs)-n:]
	}
	return xs
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// panels renders scenarios side by side (widths ws) into h lines each, on
// shared scales: the blocks above the histogram first, then the histogram
// gets the rows every panel has left.
func (m Model) panels(scs []*loadview.Scenario, ws []int, h int) [][]string {
	tops := make([][]string, len(scs))
	tails := make([][]string, len(scs))
	plotW := max(ws[0]-plotLabelW-plotValueW, 1)
	// The plots' scales do not depend on the histogram's rows.
	pre := m.scalesOf(scs, 1, plotW)
	used := 0
	for i, sc := range scs {
		tops[i], tails[i] = m.blocks(sc, ws[i], h, pre)
		used = max(used, len(tops[i])+len(tails[i]))
	}
	histRows := min(h-used-1, 12)
	sc := pre
	sc.hist = m.scalesOf(scs, histRows, plotW).hist
	out := make([][]string, len(scs))
	for i := range scs {
		lines := tops[i]
		if histRows >= 2 {
			lines = append(lines, m.histogram(scs[i], ws[i], sc)...)
		}
		lines = append(lines, tails[i]...)
		out[i] = fitLines(lines, ws[i], h)
	}
	return out
}

func fitLines(lines []string, w, h int) []string {
	if len(lines) > h {
		lines = lines[:h]
	}
	for i := range lines {
		lines[i] = common.Fit(lines[i], w)
	}
	blank := strings.Repeat(" ", max(w, 0))
	for len(lines) < h {
		lines = append(lines, blank)
	}
	return lines
}

const plotLabelW, plotValueW = 6, 8

// blocks are a panel's lines above the histogram (title, counts, the lock
// picture, the time plots) and below it (herd measures, errors, checks),
// cut to leave the histogram at least 3 rows of h.
func (m Model) blocks(sc *loadview.Scenario, w, h int, s scales) (top, bottom []string) {
	st := m.Styles
	title := st.Title.Render(sc.Name)
	if sc.Recipe != "" && sc.Recipe != sc.Name {
		title += " (" + sc.Recipe + ")"
	}
	if sc.State != "" {
		title += " · " + sc.State
	}
	top = append(top, title)
	rate := "now " + common.Rate(last(sc.Throughput)) + "/s"
	if sc.State == "done" || sc.State == "stopped" {
		rate = "avg " + common.Rate(mean(sc.Throughput)) + "/s"
	}
	counts := fmt.Sprintf("ops %s · %s · clients %s", common.Count(sc.Ops), rate, common.Count(int64(sc.Clients)))
	if sc.SessionsAlive != sc.Clients && sc.State != "done" {
		counts += fmt.Sprintf(" (%s alive)", common.Count(int64(sc.SessionsAlive)))
	}
	top = append(top, counts)

	plots := m.plots(sc, w, s)
	bottom = m.tail(sc, w, s)
	// The lock picture gets what the plots, the tail and 3 histogram
	// rows leave, at most two fifths of the panel.
	room := h - len(top) - len(plots) - len(bottom) - 4
	if sc.Lock != nil && room >= 2 {
		// At 80x24: head, release, holder, 3 waiters and "… more".
		top = append(top, m.lockPicture(sc.Lock, w, min(room, max(h*2/5, 7)), s)...)
	}
	top = append(top, plots...)
	return top, bottom
}

func last(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return xs[len(xs)-1]
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// plots are the time series on one shared time axis (one cell per
// interval, newest on the right): throughput, p99 and p50 of the selected
// phase, queue depth, and the faults marked under them.
func (m Model) plots(sc *loadview.Scenario, w int, s scales) []string {
	st := m.Styles
	plotW := max(w-plotLabelW-plotValueW, 1)
	row := func(label string, series []float64, top float64, value string) string {
		return common.Fit(label, plotLabelW) + st.Spark.Render(sparkline.Render(series, plotW, top)) + common.FitRight(value, plotValueW)
	}
	out := []string{row("ops/s", sc.Throughput, s.ops, common.Rate(last(sc.Throughput)))}
	if p, ok := m.selected(sc); ok && len(p.P99s) > 0 {
		out = append(out,
			row("p99", msSeries(p.P99s), s.latency, common.Duration(lastValue(p.P99s))),
			row("p50", msSeries(p.P50s), s.latency, common.Duration(lastValue(p.P50s))))
	}
	if len(sc.QueueDepth) > 0 {
		out = append(out, row("depth", sc.QueueDepth, s.depth, common.Count(int64(last(sc.QueueDepth)))))
	}
	if marks := m.faultMarks(sc, plotW); marks != "" {
		out = append(out, strings.Repeat(" ", plotLabelW)+st.Warn.Render(marks))
	}
	return out
}

// lastValue is the newest interval's value, or the newest before it when
// it had none (a run's last, stopping, intervals).
func lastValue(ds []time.Duration) time.Duration {
	for i := len(ds) - 1; i >= 0; i-- {
		if ds[i] > 0 {
			return ds[i]
		}
	}
	return 0
}

func msSeries(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = ms(d)
	}
	return out
}

// histogram is the selected phase's latency distribution on the shared
// scale, with its title line.
func (m Model) histogram(sc *loadview.Scenario, w int, s scales) []string {
	p, ok := m.selected(sc)
	if !ok {
		return []string{m.Styles.Dim.Render("latency: no samples yet")}
	}
	head := m.Styles.Label.Render(fmt.Sprintf("%s · p50 %s · p99 %s · n %s", p.Name,
		common.Duration(p.P50), common.Duration(p.P99), common.Count(p.Count)))
	if len(p.Buckets) == 0 {
		return append([]string{head}, histogram.Spectrum(p, w, 5)...)
	}
	return append([]string{head}, histogram.RenderScaled(p, s.hist, w)...)
}

// tail is the herd measures, errors and the checks.
func (m Model) tail(sc *loadview.Scenario, w int, s scales) []string {
	st := m.Styles
	var out []string
	var items []string
	for _, f := range sc.Herd.Figures {
		if f.Key != figures.WakeupsPerRelease {
			items = append(items, f.Label+" "+fmtFigure(f.Value))
			continue
		}
		if sc.Lock == nil && f.Value > 0 {
			// The lock picture shows wake-ups per release; other recipes
			// that release something get the meter here.
			value := fmtFloat(f.Value)
			meterW := max(w-common.Width(f.Label)-len(value)-2, 4)
			out = append(out, f.Label+" "+value+" "+m.wakeStyle(f.Value).Render(herdBar(f.Value, s.wake, meterW)))
		}
	}
	out = append(out, packItems(items, " · ", w)...)
	if sc.ErrorsTotal > 0 {
		parts := make([]string, 0, len(sc.Errors))
		for _, e := range sc.Errors {
			parts = append(parts, fmt.Sprintf("%s %s", e.Kind, common.Count(e.Count)))
		}
		out = append(out, st.Bad.Render("errors "+common.Count(sc.ErrorsTotal))+" "+strings.Join(parts, ", "))
	}
	out = append(out, packItems(m.checkItems(sc.Checks, w), " · ", w)...)
	for _, v := range sc.Violations {
		out = append(out, st.Bad.Render("✗ "+v))
	}
	return out
}

// checkItems are the run's checks, one item each: a count after its
// label, a verdict (linearizability, a threshold) after a colon; failed
// ones in the bad style.
func (m Model) checkItems(checks []loadgen.CheckOutcome, w int) []string {
	var items []string
	for _, c := range checks {
		it := c.Label + " " + c.Value()
		if c.Group != loadgen.GroupCounted {
			it = c.Label + ": " + c.Value()
		}
		it = common.Truncate(it, w)
		if c.Bad() {
			it = m.Styles.Bad.Render(it)
		}
		items = append(items, it)
	}
	return items
}

func (m Model) wakeStyle(wake float64) interface{ Render(...string) string } {
	if wake >= float64(inspect.DefaultHerdThreshold) {
		return m.Styles.Bad
	}
	return m.Styles.OK
}

// lockPicture draws who waits on whom in at most rows lines: a fair lock
// as a chain (holder, then each waiter with the node it watches, then "…
// N more"), a herd as a fan (everybody watching one node or directory),
// and what each release woke.
func (m Model) lockPicture(g *loadgen.WaitGraph, w, rows int, s scales) []string {
	st := m.Styles
	herd := g.IsHerd()
	name := path.Base(g.Path)
	if g.Locks > 1 {
		name += fmt.Sprintf(" (1 of %d locks)", g.Locks)
	}
	out := []string{st.Label.Render(fmt.Sprintf("%s: %d holds → %s wait", name, len(g.Holders), common.Count(int64(g.WaitersTotal))))}
	wake := fmtFloat(g.WokePerRelease)
	what := "its successor"
	if herd {
		what = "the herd"
	}
	if g.Releases == 0 {
		wake, what = "-", "no release this interval"
	}
	label := fmt.Sprintf("release woke %s (%s) ", wake, what)
	out = append(out, label+m.wakeStyle(g.WokePerRelease).Render(herdBar(g.WokePerRelease, s.wake, max(w-common.Width(label), 0))))
	narrow := w < 56
	node := func(p string) string {
		if p == "" {
			return ""
		}
		n := inspect.ShortName(path.Base(g.ShortPath(p)))
		if i := strings.LastIndexByte(n, '-'); narrow && i >= 0 {
			// lock-0000000424 is #424 when space is short.
			if seq := strings.TrimLeft(n[i+1:], "0"); seq != "" && strings.Trim(seq, "0123456789") == "" {
				return "#" + seq
			}
		}
		return n
	}
	holder := "┌ HOLD  (free)"
	if len(g.Holders) > 0 {
		h := g.Holders[0]
		holder = fmt.Sprintf("┌ HOLD  %s c%d %s", orDash(node(h.Node)), h.Client, common.Duration(h.For))
		if len(g.Holders) > 1 {
			holder += st.Bad.Render(fmt.Sprintf(" +%d more holders!", len(g.Holders)-1))
		}
	}
	out = append(out, holder)
	left := rows - len(out)
	if herd {
		// The fan: each watched path with its crowd of waiters.
		for i, f := range g.Fan {
			if left <= 0 || (i > 0 && left <= 1) {
				break
			}
			crowd := fmt.Sprintf("╞═▶ %s watch %s ", common.Count(int64(f.Waiters)), g.ShortPath(f.Path))
			fan := strings.Repeat("◀", max(min(int(math.Round(float64(f.Waiters)/s.wake*float64(w-common.Width(crowd)))), w-common.Width(crowd)), 1))
			out = append(out, crowd+st.Bad.Render(fan))
			left--
		}
		if racing := g.WaitersTotal - watchers(g); left > 0 && racing > 0 {
			out = append(out, fmt.Sprintf("└ %s racing to create", common.Count(int64(racing))))
		}
		return out
	}
	// The chain. Scrolled to its end (G, pgdn), the last waiters known
	// fill the rows, with the "… more" line under them.
	scroll := max(min(m.scroll, len(g.Waiters)-(left-1)), 0)
	show := min(len(g.Waiters)-scroll, left)
	if rest := g.WaitersTotal - scroll; show < rest && show > 0 {
		show = min(show, left-1) // room for the "… more" line
	}
	for i := 0; i < show; i++ {
		c := g.Waiters[scroll+i]
		watch := m.Styles.Dim.Render("  (creating)")
		switch {
		case c.Watching != "":
			watch = " → " + node(c.Watching) + " " + common.Duration(c.WatchFor)
		case c.Node != "":
			watch = m.Styles.Dim.Render(" (woken, looking)")
		}
		out = append(out, fmt.Sprintf("├ wait  %s c%d%s", orDash(node(c.Node)), c.Client, watch))
	}
	if rest := g.WaitersTotal - scroll - show; rest > 0 && len(out) < rows {
		out = append(out, fmt.Sprintf("└ … %s more", common.Count(int64(rest))))
	}
	return out
}

func watchers(g *loadgen.WaitGraph) int {
	n := 0
	for _, f := range g.Fan {
		n += f.Waiters
	}
	return n
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// faultMarks puts ▲ under the time plots where faults happened.
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

// packItems joins items with sep into lines of at most w cells, an item
// that does not fit starting the next line: a new figure adds a line, not
// a cut one.
func packItems(items []string, sep string, w int) []string {
	var lines []string
	line := ""
	for _, it := range items {
		switch {
		case line == "":
			line = it
		case common.Width(line)+common.Width(sep)+common.Width(it) <= w:
			line += sep + it
		default:
			lines = append(lines, line)
			line = it
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// fmtFigure is fmtFloat, or "-" for a figure not known yet.
func fmtFigure(v float64) string {
	if v < 0 {
		return "-"
	}
	return fmtFloat(v)
}

func fmtFloat(v float64) string {
	switch {
	case v <= 0:
		return "0"
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 1000:
		return fmt.Sprintf("%.1f", v)
	}
	return common.Count(int64(v + 0.5))
}
