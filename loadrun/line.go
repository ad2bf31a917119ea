package loadrun

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/zkherd/zkherd/internal/format"
	"github.com/zkherd/zkherd/loadgen"
	"github.com/zkherd/zkherd/report"
)

// PrintProgress prints the events of a run on w until they end (the
// progress line of --no-tui): the progress rewritten in place on a
// terminal, one line every few seconds otherwise; notices and the lines
// that say a run starts on lines of their own. It returns once the
// channel is closed and the last line ended.
func PrintProgress(w io.Writer, events <-chan Event) {
	p := &progressLine{w: w, terminal: IsTerminal(w)}
	defer p.finish()
	for ev := range events {
		switch ev := ev.(type) {
		case EventStarting:
			if ev.Line != "" {
				p.notice(ev.Line)
			} else {
				p.finish()
			}
		case EventNotice:
			p.notice(ev.Line)
		case EventProgress:
			p.progress(ev.Progress)
		case EventEnded:
			p.finish()
		}
	}
}

// progressLine is the state of PrintProgress's line.
type progressLine struct {
	w        io.Writer
	terminal bool
	last     time.Time
	shown    bool
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// notice prints s on a line of its own.
func (p *progressLine) notice(s string) {
	p.finish()
	fmt.Fprintln(p.w, s)
}

// progress prints the progress line.
func (p *progressLine) progress(pr loadgen.Progress) {
	if pr.State == "done" {
		return
	}
	if !p.terminal && time.Since(p.last) < 5*time.Second && pr.State != "stopping" {
		return
	}
	p.last = time.Now()
	elapsed := fmt.Sprintf("%5.1fs", pr.Window.Seconds())
	if pr.Duration > 0 {
		elapsed += fmt.Sprintf("/%v", pr.Duration)
	}
	if pr.State == "ramping up" {
		elapsed = fmt.Sprintf("%5.1fs", pr.Elapsed.Seconds())
	}
	p99 := pr.Main.P99
	if pr.Main.HasCorrection {
		p99 = pr.Main.CorrectedP99 // open model: from the intended start
	}
	line := fmt.Sprintf("%s %-10s %s  clients %d/%d  ops %d  rate %.0f/s  %s p99 %s  errors %d",
		pr.Name, pr.State, elapsed, pr.SessionsAlive, pr.Clients, pr.Ops, pr.Rate,
		pr.MainPhase, format.Ms(p99), pr.Errors)
	if len(pr.Violations) > 0 {
		line += fmt.Sprintf("  VIOLATIONS %d", len(pr.Violations))
	}
	if p.terminal && len([]rune(line)) >= report.Width {
		line = compactProgress(pr, strings.TrimSpace(elapsed), format.Ms(p99))
	}
	if p.terminal {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.shown = true
	} else {
		fmt.Fprintln(p.w, line)
	}
}

// compactProgress is the progress line for a terminal row too narrow for
// the full one (rewriting in place with "\r" fails once a line wraps):
// what matters first, the clients only while some are missing, and cut
// to fit.
func compactProgress(pr loadgen.Progress, elapsed, p99 string) string {
	parts := []string{pr.Name, pr.State, elapsed}
	if len(pr.Violations) > 0 {
		parts = append(parts, fmt.Sprintf("VIOLATIONS %d", len(pr.Violations)))
	}
	parts = append(parts, fmt.Sprintf("errors %s", format.Count(pr.Errors)))
	if pr.SessionsAlive != pr.Clients {
		parts = append(parts, fmt.Sprintf("clients %d/%d", pr.SessionsAlive, pr.Clients))
	}
	parts = append(parts, fmt.Sprintf("ops %s", format.Count(pr.Ops)), fmt.Sprintf("%.0f/s", pr.Rate),
		fmt.Sprintf("%s p99 %s", pr.MainPhase, p99))
	line := strings.Join(parts, " ")
	if r := []rune(line); len(r) >= report.Width {
		line = string(r[:report.Width-2]) + "…"
	}
	return line
}

// finish ends the in-place line.
func (p *progressLine) finish() {
	if p.shown {
		fmt.Fprintln(p.w)
		p.shown = false
	}
	p.last = time.Time{}
}
