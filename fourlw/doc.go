// Package fourlw asks ZooKeeper servers about themselves: the four-letter
// words (srvr, mntr, cons, wchp, dump, ...) over the client port, and the
// AdminServer's JSON commands (/commands/monitor, ...) when the four-letter
// words are not whitelisted.
//
// [QueryTLS] sends one four-letter word. The Parse* functions turn replies into
// values; they are pure and tested against replies captured from ZooKeeper
// 3.8. [Admin] is the AdminServer client; [Client] asks one member, trying
// the four-letter word first and the AdminServer second. [Probe] finds out
// which commands answer on which member and, for those that do not, the
// configuration line that enables them.
//
// A [Poller] polls every member of an ensemble periodically and in
// parallel, so that a slow or dead member is reported as down while the
// others keep updating, and delivers [Snapshot]s with merged views
// (connections, watches, ephemerals of all members) and windowed rates
// computed from two successive mntr replies ([WindowOf]).
//
// ZooKeeper facts this package relies on (3.8): only srvr is whitelisted
// by default; cons, wchp, wchc and dump cover only the sessions connected to
// the server asked; wchp and wchc list data watches only, while mntr's
// zk_watch_count counts child watches too; mntr's latency figures are since
// the server started (or since srst).
package fourlw
