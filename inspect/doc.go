// Package inspect collects what the zkherd inspector shows, with no user
// interface: merged four-letter-word polls of every ensemble member
// (servers, sessions, watches), lock chains and queue depths found in the
// tree, and lazy, watched browsing of znodes.
//
// Everything is pull-based and bounded so that a slow or dead member, a node
// with 100,000 children or a 1 MB value never blocks the caller for long:
// every call takes a context, polls run members in parallel with a timeout
// each, child lists are fetched once per request and paged by the caller,
// and data is read only for the node asked for.
//
// ZooKeeper's own blind spots are reported, not hidden: child watches never
// appear in wchp, so a Cluster carries the difference between mntr's
// zk_watch_count and the itemised watches; members whose four-letter words
// are not whitelisted are named with the config line that enables them.
package inspect
