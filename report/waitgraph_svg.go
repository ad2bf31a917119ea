package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"path"
	"strings"

	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/internal/format"
)

// The wait graph as the dashboard draws it (tui/views/load): a fair lock
// as a chain (the holder, then each waiter with an arrow to the node it
// watches, then "… N more"), a herd as a fan (every waiter's watch on one
// node or directory), with what a release woke on a bar whose scale the
// scenarios of a run share.

const (
	wgWidth   = 620
	wgRow     = 26
	wgBoxW    = 300
	wgChain   = 8  // waiters drawn in a chain
	wgFanDots = 48 // waiters drawn in a fan
)

// waitGraphSVG draws g; wakeMax is the wake bar's full scale (shared by
// the scenarios compared).
func waitGraphSVG(g *WaitGraph, wakeMax float64, id int) template.HTML {
	var body strings.Builder
	y := 20
	name := path.Base(g.Path)
	if g.Locks > 1 {
		name += fmt.Sprintf(" (1 of %d locks)", g.Locks)
	}
	text(&body, 10, y, "title", fmt.Sprintf("%s at t=%ss: %d holds, %s wait", name, fmtNum(g.T, 1), len(g.Holders), format.Count(int64(g.WaitersTotal))))
	y += 22
	wake, what, color := fmtNum(g.WokePerRelease, 1), "its successor", "#59a14f"
	if g.Herd {
		what, color = "the herd", "#e15759"
	}
	if g.Releases == 0 {
		wake, what = "-", "no release in this interval"
	}
	label := fmt.Sprintf("a release woke %s (%s)", wake, what)
	text(&body, 10, y, "label", label)
	if wakeMax > 0 && g.Releases > 0 {
		w := math.Max(2, math.Round(g.WokePerRelease/wakeMax*260))
		fmt.Fprintf(&body, `<rect class="wake" x="300" y="%d" width="%.0f" height="12" fill="%s"/>`, y-10, w, color)
		text(&body, 300+int(w)+6, y, "value", wake)
	}
	y += 14

	holder := "(free)"
	if len(g.Holders) > 0 {
		h := g.Holders[0]
		holder = fmt.Sprintf("%s  c%d  %s", orDash(g.node(h.Node)), h.Client, format.Ms(h.ForMs))
		if len(g.Holders) > 1 {
			holder += fmt.Sprintf("  +%d more holders!", len(g.Holders)-1)
		}
	}
	y = box(&body, y, "HOLD", holder, "#d8ecd3")
	if g.Herd {
		y = fanSVG(&body, g, y)
	} else {
		y = chainSVG(&body, g, y)
	}
	return template.HTML(fmt.Sprintf(`<svg class="plot waitgraph %s" id="wg%d" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">`+
		`<defs><marker id="wga%d" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#5b6675"/></marker></defs>%s</svg>`,
		map[bool]string{true: "fan", false: "chain"}[g.Herd], id, wgWidth, y+8, wgWidth, y+8, id, strings.ReplaceAll(body.String(), "url(#wga)", fmt.Sprintf("url(#wga%d)", id))))
}

// chainSVG draws the first waiters below the holder, each with an arrow
// to the node it watches when that node is drawn above it.
func chainSVG(b *strings.Builder, g *WaitGraph, y int) int {
	rows := map[string]int{} // node -> its box's middle
	if len(g.Holders) > 0 && g.Holders[0].Node != "" {
		rows[g.Holders[0].Node] = y - wgRow/2 - 1
	}
	show := min(len(g.Waiters), wgChain)
	for _, c := range g.Waiters[:show] {
		watch := "(creating its node)"
		switch {
		case c.Watching != "":
			watch = "watches " + g.node(c.Watching) + " for " + format.Ms(c.WatchForMs)
		case c.Node != "":
			watch = "(woken, looking)"
		}
		mid := y + wgRow/2 - 1
		if up, ok := rows[strings.TrimSuffix(c.Watching, "/")]; ok {
			fmt.Fprintf(b, `<path class="watch" d="M%d,%d C%d,%d %d,%d %d,%d" fill="none" stroke="#5b6675" stroke-width="1.2" marker-end="url(#wga)"/>`,
				10+wgBoxW, mid, 10+wgBoxW+28, mid, 10+wgBoxW+28, up, 10+wgBoxW+2, up)
		}
		y = box(b, y, "wait", fmt.Sprintf("%s  c%d", orDash(g.node(c.Node)), c.Client), "#eef1f5")
		text(b, 10+wgBoxW+36, mid+4, "label", watch)
		if c.Node != "" {
			rows[c.Node] = mid
		}
	}
	if rest := g.WaitersTotal - show; rest > 0 {
		y += 4
		text(b, 14, y+10, "label", fmt.Sprintf("… %s more waiting", format.Count(int64(rest))))
		y += 16
	}
	return y
}

// fanSVG draws the herd: a dot per waiter (up to wgFanDots) with a line
// to the path it watches, then the other watched paths and the waiters
// racing to create.
func fanSVG(b *strings.Builder, g *WaitGraph, y int) int {
	if len(g.Fan) == 0 {
		text(b, 14, y+12, "label", fmt.Sprintf("%s waiting, none watching yet (racing to create)", format.Count(int64(g.WaitersTotal))))
		return y + 20
	}
	f := g.Fan[0]
	target := fmt.Sprintf("watched: %s", g.ShortPath(f.Path))
	ty := y + 8
	fmt.Fprintf(b, `<rect class="node" x="380" y="%d" width="230" height="22" rx="4" fill="#fbe3e3" stroke="#e15759"/>`, ty)
	text(b, 388, ty+15, "label", target)
	dots := min(f.Waiters, wgFanDots)
	perRow := 16
	for i := range dots {
		cx := 20 + (i%perRow)*18
		cy := y + 10 + (i/perRow)*18
		fmt.Fprintf(b, `<line class="watch" x1="%d" y1="%d" x2="378" y2="%d" stroke="#e15759" stroke-opacity="0.35" stroke-width="1"/>`, cx, cy, ty+11)
		fmt.Fprintf(b, `<circle class="waiter" cx="%d" cy="%d" r="5" fill="#e15759"/>`, cx, cy)
	}
	y += 10 + ((dots+perRow-1)/perRow)*18
	line := fmt.Sprintf("%s waiters watch %s", format.Count(int64(f.Waiters)), g.ShortPath(f.Path))
	if f.Waiters > dots {
		line += fmt.Sprintf(" (%d drawn)", dots)
	}
	text(b, 14, y+8, "label", line)
	y += 18
	for _, o := range g.Fan[1:] {
		text(b, 14, y+8, "label", fmt.Sprintf("%s watch %s", format.Count(int64(o.Waiters)), g.ShortPath(o.Path)))
		y += 16
	}
	watching := 0
	for _, o := range g.Fan {
		watching += o.Waiters
	}
	if racing := g.WaitersTotal - watching; racing > 0 {
		text(b, 14, y+8, "label", fmt.Sprintf("%s racing to create", format.Count(int64(racing))))
		y += 16
	}
	return y
}

// box draws one contender's box at y and returns the next row's y.
func box(b *strings.Builder, y int, role, what, fill string) int {
	fmt.Fprintf(b, `<rect class="node" x="10" y="%d" width="%d" height="%d" rx="4" fill="%s" stroke="#9aa4b1"/>`, y, wgBoxW, wgRow-6, fill)
	text(b, 18, y+14, "value", role)
	text(b, 60, y+14, "label", what)
	return y + wgRow
}

func text(b *strings.Builder, x, y int, class, s string) {
	fmt.Fprintf(b, `<text class="%s" x="%d" y="%d">%s</text>`, class, x, y, html.EscapeString(s))
}

// node is a node's name as the dashboard shows it: relative to the lock,
// a protected name's GUID left out (inspect.ShortName).
func (g *WaitGraph) node(p string) string {
	if p == "" {
		return ""
	}
	return inspect.ShortName(path.Base(g.ShortPath(p)))
}
