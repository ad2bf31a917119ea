package inspect

import "slices"

// One path convention everywhere: every path the inspector returns is
// relative to the chroot of --server host:port/app, as the Tree's are and
// as the application using the chroot names its nodes, so that a path
// copied from Locks or Queues opens with :cd. The servers' four-letter
// words name paths from the real root: relSnapshot maps them at the exit,
// and drops what lies outside the chroot (another application's nodes and
// watches). Inside the package paths stay the servers'.

// relSnapshot makes every path of snap relative to the chroot.
func (in *Inspector) relSnapshot(snap *Snapshot) {
	if in.opts.Chroot == "" {
		return
	}
	relAll := func(ps []string) []string {
		out := ps[:0:0]
		for _, p := range ps {
			if r, ok := in.rel(p); ok {
				out = append(out, r)
			}
		}
		return out
	}
	c := &snap.Cluster
	c.Watches = slices.DeleteFunc(c.Watches, func(w PathWatch) bool {
		_, ok := in.rel(w.Path)
		return !ok
	})
	for i := range c.Watches {
		c.Watches[i].Path, _ = in.rel(c.Watches[i].Path)
	}
	for i := range c.Sessions {
		s := &c.Sessions[i]
		s.Ephemerals, s.Watches = relAll(s.Ephemerals), relAll(s.Watches)
	}
	for _, ls := range [][]Lock{snap.Locks, snap.Herds} {
		for i := range ls {
			if r, ok := in.rel(ls[i].Path); ok {
				ls[i].Path = r
			}
		}
	}
	for i := range snap.Queues {
		if r, ok := in.rel(snap.Queues[i].Path); ok {
			snap.Queues[i].Path = r
		}
	}
}
