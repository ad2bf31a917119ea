package tui

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/tui/common"
	"github.com/zkherd/zkherd/tui/internal/tuitest"
	"github.com/zkherd/zkherd/tui/loadview"
)

var inspectViews = []viewID{viewTree, viewLocks, viewQueues, viewSessions, viewServers}

// screen feeds msgs to a fresh inspector root of the given size and returns
// the final model.
func screen(t *testing.T, w, h int, order []viewID, msgs ...tea.Msg) Model {
	t.Helper()
	m := newModel(context.Background(), common.New(w, h), nil, order, feeds{}, "127.0.0.1:2181 · read-only")
	var tm tea.Model = m
	tm, _ = tm.Update(tea.WindowSizeMsg{Width: w, Height: h})
	for _, msg := range msgs {
		var cmd tea.Cmd
		tm, cmd = tm.Update(msg)
		for _, next := range navigation(cmd) {
			tm, _ = tm.Update(next)
		}
	}
	return tm.(Model)
}

// navigation runs cmd and returns the drill-downs it asks for (GotoMsg),
// as the program would deliver them. Commands that wait (a notice's
// timer) are left running: only what arrives at once is taken.
func navigation(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-done:
	case <-time.After(50 * time.Millisecond):
		return nil
	}
	switch msg := msg.(type) {
	case common.GotoMsg:
		return []tea.Msg{msg}
	case tea.BatchMsg:
		var out []tea.Msg
		for _, c := range msg {
			out = append(out, navigation(c)...)
		}
		return out
	}
	return nil
}

func keys(ks ...string) []tea.Msg {
	out := make([]tea.Msg, len(ks))
	for i, k := range ks {
		out[i] = tuitest.Key(k)
	}
	return out
}

func TestScreen(t *testing.T) {
	snap := common.SnapshotMsg{Snapshot: tuitest.Cluster(t, "standalone")}
	tests := []struct {
		name string
		msgs []tea.Msg
	}{
		{"locks", append([]tea.Msg{snap}, keys("2")...)},
		{"sessions", append([]tea.Msg{snap}, keys("4")...)},
		{"servers", append([]tea.Msg{snap}, keys("5")...)},
		{"history_back", append([]tea.Msg{snap}, keys("2", "4", "[")...)},
		{"drill_lock_to_node", append([]tea.Msg{snap}, keys("2", "enter", "j", "enter")...)},
		{"drill_lock_to_session", append([]tea.Msg{snap}, keys("2", "enter", "j", "s")...)},
		{"drill_session_back_forward", append([]tea.Msg{snap}, keys("2", "enter", "j", "s", "backspace", "]")...)},
		{"help", append([]tea.Msg{snap}, keys("2", "?")...)},
		{"filter_typing", append([]tea.Msg{snap}, keys("2", "/", "h", "e", "r")...)},
		{"filter_applied", append([]tea.Msg{snap}, keys("2", "/", "h", "e", "r", "d", "enter")...)},
		{"command_typing", append([]tea.Msg{snap}, keys("2", ":", "s", "e", "r")...)},
		{"command_switches_view", append([]tea.Msg{snap}, keys(":", "s", "e", "r", "v", "e", "r", "s", "enter")...)},
		{"confirm", []tea.Msg{snap, common.ConfirmMsg{Prompt: "delete /app/x (version 3)? y/N"}}},
		{"notice", []tea.Msg{snap, common.NoticeMsg{Text: "read-only: start zkherd inspect with --allow-writes to delete or set data", Error: true}}},
		{"capability_notice", []tea.Msg{missingCaps(t)}},
	}
	for _, tt := range tests {
		for _, sz := range tuitest.Sizes {
			t.Run(tt.name+"_"+sz.Name, func(t *testing.T) {
				m := screen(t, sz.Width, sz.Height, inspectViews, tt.msgs...)
				v := m.View()
				got := tuitest.Plain(v.Content)
				tuitest.CheckSize(t, got, sz.Width, sz.Height)
				tuitest.Golden(t, tuitest.Screen(v.Content))
				if !v.AltScreen {
					t.Error("the view does not ask for the alternate screen")
				}
			})
		}
	}
}

func missingCaps(t *testing.T) common.SnapshotMsg {
	snap := tuitest.Cluster(t, "standalone")
	for i := range snap.Cluster.Capabilities {
		c := &snap.Cluster.Capabilities[i]
		if c.Command != "srvr" {
			c.Available, c.Enable = false, "4lw.commands.whitelist=*"
		}
	}
	snap.Notices = []string{"unavailable: [mntr cons wchp dump]; enable with: 4lw.commands.whitelist=* (see Servers)"}
	return common.SnapshotMsg{Snapshot: snap}
}

// TestSmallTerminals: every view at 60x20 and smaller still draws a screen
// of exactly the terminal's size, without panicking.
func TestSmallTerminals(t *testing.T) {
	order := append(append([]viewID{}, inspectViews...), viewLoad)
	msgs := []tea.Msg{
		common.SnapshotMsg{Snapshot: tuitest.Cluster(t, "ensemble3_member_down")},
		common.LoadMsg{Snapshot: tuitest.Recorded(t, "herd_vs_fair", 0.8)},
	}
	for _, size := range [][2]int{{60, 20}, {40, 12}, {20, 5}, {1, 1}} {
		for i := range order {
			spec, _ := specOf(order[i])
			name := spec.names[0]
			t.Run(fmt.Sprintf("%s_%dx%d", name, size[0], size[1]), func(t *testing.T) {
				m := screen(t, size[0], size[1], order, append(msgs, tuitest.Key(strconv.Itoa(i+1)), tuitest.Key("tab"), tuitest.Key("j"))...)
				got := tuitest.Plain(m.View().Content)
				tuitest.CheckSize(t, got, size[0], size[1])
				if size == [2]int{60, 20} {
					tuitest.Golden(t, tuitest.Screen(m.View().Content))
				}
			})
		}
	}
}

// TestNoColor: with the ASCII profile (NO_COLOR), no colour is sent, and the
// cursor row still stands out in reverse video.
func TestNoColor(t *testing.T) {
	m := screen(t, 80, 24, inspectViews, common.SnapshotMsg{Snapshot: tuitest.Cluster(t, "standalone")}, tuitest.Key("2"))
	out := tuitest.ASCII(m.View().Content)
	if regexp.MustCompile("\x1b\\[[0-9;]*(38|48)[;:]").MatchString(out) {
		t.Errorf("colour escape sequences under the ASCII profile:\n%q", out)
	}
	if !strings.Contains(out, "\x1b[7m") {
		t.Errorf("no reverse video for the cursor under the ASCII profile:\n%q", out)
	}
}

func TestQuit(t *testing.T) {
	tests := []struct {
		name string
		keys []string
		quit bool
	}{
		{"q", []string{"q"}, true},
		{"ctrl+c", []string{"ctrl+c"}, true},
		{"q while filtering types q", []string{"/", "q"}, false},
		{"colon q enter", []string{":", "q", "enter"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tm tea.Model = screen(t, 80, 24, inspectViews)
			var cmd tea.Cmd
			for _, k := range tt.keys {
				tm, cmd = tm.Update(tuitest.Key(k))
			}
			quit := false
			if cmd != nil {
				_, quit = cmd().(tea.QuitMsg)
			}
			if quit != tt.quit {
				t.Errorf("quit = %v, want %v", quit, tt.quit)
			}
		})
	}
}

// TestSnapshotsShrink: with the cursor at the end of every view, snapshots
// with less and then no data (a run ending, a member dying) draw without
// panicking.
func TestSnapshotsShrink(t *testing.T) {
	snaps := []*inspect.Snapshot{
		tuitest.Cluster(t, "ensemble3"),
		tuitest.Cluster(t, "standalone"),
		{},
		tuitest.Cluster(t, "ensemble3_member_down"),
	}
	for i := range inspectViews {
		var tm tea.Model = screen(t, 80, 24, inspectViews, common.SnapshotMsg{Snapshot: snaps[0]})
		tm, _ = tm.Update(tuitest.Key(strconv.Itoa(i + 1)))
		for _, s := range snaps {
			for _, k := range []string{"G", "tab", "G"} {
				tm, _ = tm.Update(tuitest.Key(k))
			}
			tm, _ = tm.Update(common.SnapshotMsg{Snapshot: s})
			tuitest.CheckSize(t, tuitest.Plain(tm.View().Content), 80, 24)
		}
	}
}

// TestConfirm: y runs the confirmed command, n and esc cancel it, other
// keys wait.
func TestConfirm(t *testing.T) {
	type ran struct{}
	tests := []struct {
		keys []string
		ran  bool
	}{
		{[]string{"y"}, true},
		{[]string{"x", "y"}, true},
		{[]string{"n"}, false},
		{[]string{"esc"}, false},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.keys, ","), func(t *testing.T) {
			var tm tea.Model = screen(t, 80, 24, inspectViews, common.ConfirmMsg{Prompt: "delete /x? y/N", Yes: func() tea.Msg { return ran{} }})
			var cmd tea.Cmd
			for _, k := range tt.keys {
				tm, cmd = tm.Update(tuitest.Key(k))
			}
			m := tm.(Model)
			if m.confirm != nil {
				t.Fatal("still asking after the answer")
			}
			if !tt.ran {
				// Cancelled: the command is the notice's timer, not ours.
				if m.notice != "cancelled" {
					t.Errorf("notice %q, want cancelled", m.notice)
				}
				return
			}
			if cmd == nil {
				t.Fatal("no command after y")
			}
			if _, ok := cmd().(ran); !ok {
				t.Error("y did not run the confirmed command")
			}
		})
	}
}

// TestQuitAsksDuringRun: q while a load run sends updates asks first; n
// keeps the dashboard, y quits. Once the run is done, q quits at once.
func TestQuitAsksDuringRun(t *testing.T) {
	loads := make(chan *loadview.Snapshot)
	m := newModel(context.Background(), common.New(80, 24), nil, []viewID{viewLoad}, feeds{loads: loads}, "")
	var tm tea.Model = m
	tm, cmd := tm.Update(tuitest.Key("q"))
	if cmd != nil || tm.(Model).confirm == nil {
		t.Fatal("q during a run did not ask")
	}
	tm, _ = tm.Update(tuitest.Key("n"))
	if tm.(Model).confirm != nil || tm.(Model).quit {
		t.Fatal("n did not keep the dashboard")
	}
	tm, _ = tm.Update(tuitest.Key("q"))
	tm, cmd = tm.Update(tuitest.Key("y"))
	if cmd == nil {
		t.Fatal("y gave no command")
	}
	tm, cmd = tm.Update(cmd())
	if _, ok := cmd().(tea.QuitMsg); !ok || !tm.(Model).quit {
		t.Error("y did not quit")
	}
	// The run is over: q quits without asking.
	tm, _ = newModel(context.Background(), common.New(80, 24), nil, []viewID{viewLoad}, feeds{loads: loads}, "").
		Update(common.ChannelClosedMsg{Name: "load"})
	if _, cmd = tm.Update(tuitest.Key("q")); cmd == nil {
		t.Fatal("q after the run gave no command")
	} else if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Error("q after the run did not quit at once")
	}
}

// TestQuitAnswersNo: ctrl+c while a question is pending runs its No, so an
// edit's temporary file is removed even when the user quits instead of
// answering.
func TestQuitAnswersNo(t *testing.T) {
	declined := false
	confirm := common.ConfirmMsg{Prompt: "set data? y/N", No: func() tea.Msg { declined = true; return nil }}
	m := screen(t, 80, 24, inspectViews, confirm)
	_, cmd := m.Update(tuitest.Key("ctrl+c"))
	runCmds(cmd)
	if !declined {
		t.Errorf("ctrl+c with a question pending did not run its No")
	}
}

// runCmds runs cmd and the commands of the batches and sequences it returns.
func runCmds(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	msg := cmd()
	if v := reflect.ValueOf(msg); v.Kind() == reflect.Slice {
		for i := range v.Len() {
			if c, ok := v.Index(i).Interface().(tea.Cmd); ok {
				runCmds(c)
			}
		}
	}
}

// TestStatusSaysWhenLate: the status line's "polled" time is the state on
// screen; once the next snapshot is overdue (a poll under way for tens of
// seconds on a busy ensemble) it says that the screen is that old, not
// that it is current (CI's herd-children capture read "polled 06:32:07"
// 40 s later).
func TestStatusSaysWhenLate(t *testing.T) {
	snap := tuitest.Cluster(t, "standalone")
	snap.Cost.Interval = 16 * time.Second
	at := snap.Cluster.At
	tests := []struct {
		name  string
		clock time.Duration // after the snapshot
		want  string
	}{
		{"no tick yet", 0, "polled " + at.Format("15:04:05")},
		{"within the interval", 15 * time.Second, "polled " + at.Format("15:04:05")},
		{"within the grace", 20 * time.Second, "polled " + at.Format("15:04:05")},
		{"late", 40 * time.Second, "polling… (last poll " + at.Format("15:04:05") + ", 40s ago)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs := []tea.Msg{common.SnapshotMsg{Snapshot: snap}}
			if tt.clock > 0 {
				msgs = append(msgs, clockMsg(at.Add(tt.clock)))
			}
			m := screen(t, 160, 24, inspectViews, msgs...)
			if got := m.summary(); !strings.Contains(got, tt.want) {
				t.Errorf("status %q, want %q in it", got, tt.want)
			}
		})
	}
}

// TestStatusSaysSessionsAsOf: the sessions counted on the status line come
// from cons, paced by its cost; once the list is more than a few polls
// old the line says as of when.
func TestStatusSaysSessionsAsOf(t *testing.T) {
	snap := tuitest.Cluster(t, "standalone")
	at := snap.At
	for _, tt := range []struct {
		listed time.Duration // before the snapshot
		want   bool
	}{{time.Second, false}, {20 * time.Second, true}} {
		s := *snap
		s.Cluster.SessionsAt = at.Add(-tt.listed)
		m := screen(t, 160, 24, inspectViews, common.SnapshotMsg{Snapshot: &s})
		asOf := "(as of " + at.Add(-tt.listed).Format("15:04:05") + ")"
		if got := m.summary(); strings.Contains(got, asOf) != tt.want {
			t.Errorf("listed %v before: status %q, want %q in it: %v", tt.listed, got, asOf, tt.want)
		}
	}
}

// TestTellsTheSourceWhatIsShown: the source re-checks the Tree's paths
// every snapshot only while the Tree is on screen, asks the watch lists
// only while a view shows watches, the sessions (cons, dump) at their own
// pace only while the Sessions view is on screen, the members' figures
// (srvr, mntr) only while the Servers view is: each view switch tells it.
func TestTellsTheSourceWhatIsShown(t *testing.T) {
	var told []inspect.Shown
	f := feeds{shown: func(s inspect.Shown) { told = append(told, s) }}
	m := newModel(context.Background(), common.New(80, 24), nil, inspectViews, f, "test")
	m.Init()
	var tm tea.Model = m
	for _, k := range []string{"2", "4", "5", "1"} {
		tm, _ = tm.Update(tuitest.Key(k))
	}
	want := []inspect.Shown{
		{Tree: true},                    // Tree, the first view
		{Watches: true},                 // Locks
		{Watches: true, Sessions: true}, // Sessions
		{Servers: true},                 // Servers
		{Tree: true},                    // Tree
	}
	if !slices.Equal(told, want) {
		t.Errorf("told %+v,\nwant %+v", told, want)
	}
}
