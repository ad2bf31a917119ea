package common

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/zkherd/zkherd/inspect"
	"github.com/zkherd/zkherd/tui/loadview"
)

// SnapshotMsg carries a new cluster snapshot to every view.
type SnapshotMsg struct{ Snapshot *inspect.Snapshot }

// LoadMsg carries a new load-run snapshot to the dashboard.
type LoadMsg struct{ Snapshot *loadview.Snapshot }

// NoticeMsg asks the root to show a one-line message in the status bar.
type NoticeMsg struct {
	Text  string
	Error bool
}

// ConfirmMsg asks the root to ask the user a yes/no question; Yes runs only
// if the user answers y, No (optional) if not.
type ConfirmMsg struct {
	Prompt string
	Yes    tea.Cmd
	No     tea.Cmd
}

// GotoMsg asks the root to drill down to a place of another view: View is
// a name ":" accepts ("tree", "sessions"), Target what ShowMsg carries to
// it. The place left is kept in the history ([ and ] move through it).
type GotoMsg struct{ View, Target string }

// ShowMsg tells a view to show a place: a path in the Tree, a session id
// (as SessionHex writes it) in Sessions, a lock or queue path in theirs.
// Target is what the view's Place returned, or what a GotoMsg carried.
type ShowMsg struct{ Target string }

// BookmarksMsg says the bookmarks changed (a view added or removed one).
type BookmarksMsg struct{}

// FilterMsg sets the filter of the active view ("" clears it).
type FilterMsg struct{ Text string }

// CommandMsg passes a ":" command the root does not handle to the active
// view: ":set hello world" is Name "set", Arg "hello world".
type CommandMsg struct{ Name, Arg string }

// PromptMsg asks the root to read a line of text; on enter, the root sends
// CommandMsg{Name: Command, Arg: text} to the active view, on esc
// CommandMsg{Name: CancelCommand} if it is set.
type PromptMsg struct{ Prompt, Initial, Command, CancelCommand string }

// ChangesMsg carries watch notifications to the views.
type ChangesMsg struct{ Changes []inspect.Change }

// ChannelClosedMsg says a live-data channel closed: its producer is done.
type ChannelClosedMsg struct{ Name string }

// Listen returns a command that waits for the next value on ch and wraps
// it with wrap; the view that handles the message re-issues Listen to keep
// receiving (bubbletea's realtime pattern). When ch closes it yields
// ChannelClosedMsg{name}; when ctx ends, nothing.
func Listen[T any](ctx context.Context, name string, ch <-chan T, wrap func(T) tea.Msg) tea.Cmd {
	return func() tea.Msg {
		select {
		case v, ok := <-ch:
			if !ok {
				return ChannelClosedMsg{Name: name}
			}
			return wrap(v)
		case <-ctx.Done():
			return nil
		}
	}
}

// Latest relays values from in to the returned channel at most once per
// every, always the newest one, so that a fast producer never waits for the
// interface and the interface never redraws more than 1/every times a
// second. The last value before in closes is always delivered; the returned
// channel is closed after it, or when ctx ends.
func Latest[T any](ctx context.Context, in <-chan T, every time.Duration) <-chan T {
	out := make(chan T)
	go func() {
		defer close(out)
		var (
			pending T
			have    bool
			tick    = time.NewTicker(every)
			ready   = true // nothing was sent during the current interval
		)
		defer tick.Stop()
		for in != nil || have {
			var send chan<- T
			if have && ready {
				send = out
			}
			select {
			case v, ok := <-in:
				if !ok {
					in = nil
					ready = true // flush the last value without waiting
					continue
				}
				pending, have = v, true
			case send <- pending:
				have, ready = false, false
			case <-tick.C:
				ready = true
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}
