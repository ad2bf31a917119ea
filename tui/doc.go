// Package tui is zkherd's terminal interface, built on Bubble Tea v2: the
// live cluster inspector (RunInspect, for `zkherd inspect`) and the load
// dashboard (RunLoad, for `zkherd load` and `zkherd demo`).
//
// The layout follows soft-serve: tui/common (size, styles, key map shared by
// all), tui/styles, tui/keymap, tui/components/<widget> and tui/views/<view>.
// The root model holds every view as its concrete type, and each view's
// Update returns its own type, so nothing is type-asserted.
//
// Nothing blocks the interface: cluster snapshots, watch notifications and
// load snapshots arrive through commands that re-arm on channels, load
// snapshots coalesced to at most 10 per second, and every ZooKeeper read runs
// in a command with a timeout.
package tui
