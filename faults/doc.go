// Package faults carries out a scenario's fault schedule during a load run:
// it SIGKILLs the ensemble's leader or a member and restarts it, SIGSTOPs
// and SIGCONTs a member, cuts, delays or silences client connections, and
// expires sessions (the current holder's, or random ones at a rate).
//
// Server faults act on a local ensemble (package ensemble) through the
// Ensemble interface. Connection faults and expiries act through a Network:
// one faultproxy per member, between the load clients and the servers. A
// session is expired for real and at once: the proxy has seen the
// session's id and password in the server's ConnectResponse, so faults cut
// the client's connection, hold back its reconnection (so the client has
// noticed the drop, as a partitioned client would), open a connection of
// its own as that session and send closeSession. The server deletes the
// session's ephemeral nodes and fires their watches at that moment, and
// answers the client's reconnection with "session expired".
//
// Every fault and every recovery is an Event, handed to a callback as it
// happens. The Executor also measures what each fault cost: how long a
// lock stayed unavailable after its holder's session was expired (against
// the session timeout, which is what a crashed holder would cost), how
// long the ensemble and the recipe took to have a leader again after a
// leader kill, and how long throughput took to come back.
package faults
