// Package ensemble runs real Apache ZooKeeper servers on 127.0.0.1 for tests,
// the demo and `zkherd cluster up`.
//
// zkherd never mocks ZooKeeper: its recipes, inspector and load generator are
// only worth something if they behave correctly against the real server,
// including when members die, stall or come back. Start launches 1, 3, 5 or 7 JVMs
// from a local installation (Debian's zookeeper package, $ZOOKEEPER_HOME, or
// zkServer.sh on PATH), each on free loopback ports in its own directory, and
// returns once every member serves and, for several members, exactly one leads.
// Leader, WaitLeader and Mode ask the members (fourlw's srvr four-letter
// word) who leads, and AwaitLeader is the one leader wait; Kill, Pause, Resume, StopMember and Restart inject the
// faults the rest of zkherd is tested against. Package enstest wraps Start
// for tests.
//
// With Options.TLS the members accept clients only over TLS (Netty's
// secureClientPort, no plain port) with certificates Start makes (TLSFiles);
// the four-letter words answer there too, after the handshake.
//
// The servers run with every four-letter word whitelisted, no connection
// limit per client address, session timeouts from 1s to 60s, and the
// AdminServer on its own loopback port when the installation can run it.
//
// No JVM outlives its owner: Stop kills every member (paused ones included),
// waits for them and removes the directory Start created; on Linux each JVM
// also gets SIGKILL if the Go process dies without calling Stop.
package ensemble
