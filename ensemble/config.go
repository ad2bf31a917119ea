package ensemble

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Server timing. A 500 ms tick (ZooKeeper's default is 2 s) lets tests use
// 1 s sessions, since the server expires sessions at tick granularity, and
// makes followers notice a stalled (paused) leader after syncLimit ticks (5 s)
// rather than 10 s. initLimit and syncLimit stay generous in time so a busy
// 2-core machine running tests under -race does not drop followers.
const (
	tickTimeMs        = 500
	initLimitTicks    = 20 // 10 s for a follower to connect and sync
	syncLimitTicks    = 10 // 5 s of silence before a follower or leader gives up
	minSessionTimeout = 1000
	maxSessionTimeout = 60000

	clientPortListenBacklog = 4096
)

// ports are the loopback ports of one member.
type ports struct {
	client, admin, peer, election int
}

// freePorts finds n distinct free ports on 127.0.0.1. All listeners stay open
// until all ports are chosen, so the kernel hands out no port twice; another
// process may still take one before the JVM binds it, which Start handles by
// retrying.
func freePorts(n int) ([]int, error) {
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ps := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("ensemble: find a free port: %w", err)
		}
		ls = append(ls, l)
		ps = append(ps, l.Addr().(*net.TCPAddr).Port)
	}
	return ps, nil
}

// zooCfg renders the zoo.cfg of member id. peers lists all members' ports
// for a replicated ensemble and is nil for a standalone server.
//
// With tlsFiles the client port is TLS only (Netty's secureClientPort; no
// plain port), the servers check client certificates against the CA
// (ssl.clientAuth=need, ZooKeeper's default, as production ensembles
// run), and the AdminServer answers over HTTPS only, with the same
// certificate (its TLS settings are the ssl.quorum.* keys).
func zooCfg(id int, dataDir string, p ports, peers []ports, noFsync, admin bool, tlsFiles *TLSFiles, cfg ServerConfig) string {
	var b strings.Builder
	line := func(k string, v any) { fmt.Fprintf(&b, "%s=%v\n", k, v) }
	b.WriteString("# written by zkherd's ensemble package\n")
	line("tickTime", tickTimeMs)
	line("initLimit", initLimitTicks)
	line("syncLimit", cfg.syncLimitTicks())
	line("dataDir", dataDir)
	if tlsFiles == nil {
		line("clientPort", p.client)
		line("clientPortAddress", "127.0.0.1")
	} else {
		line("secureClientPort", p.client)
		line("secureClientPortAddress", "127.0.0.1")
		line("serverCnxnFactory", "org.apache.zookeeper.server.NettyServerCnxnFactory")
		for _, prefix := range []string{"ssl.", "ssl.quorum."} {
			line(prefix+"keyStore.location", tlsFiles.ServerKeyStore)
			line(prefix+"keyStore.type", "PEM")
			line(prefix+"trustStore.location", tlsFiles.CA)
			line(prefix+"trustStore.type", "PEM")
		}
		line("ssl.clientAuth", "need")
		if admin {
			line("admin.forceHttps", "true")
		}
	}
	line("maxClientCnxns", 0) // the load generator opens many sessions from one address
	// The client port's accept queue (ZooKeeper 3.6+; Java's default is
	// 50). When thousands of sessions reconnect at once after a restart,
	// connections beyond it are left half open: the client's ConnectRequest
	// is never read and the session waits out its handshake timeout. The
	// kernel caps it at net.core.somaxconn (4096 on current Linux). Older
	// servers take an unknown key as a system property and ignore it.
	line("clientPortListenBacklog", clientPortListenBacklog)
	line("minSessionTimeout", minSessionTimeout)
	line("maxSessionTimeout", cfg.maxSessionMs())
	line("4lw.commands.whitelist", "*") // the inspector needs mntr, cons, wchp, dump...
	line("preAllocSize", 4096)          // KiB; the 64 MiB default is wasteful for throwaway servers
	if noFsync {
		line("forceSync", "no") // becomes zookeeper.forceSync: no fsync per transaction
	}
	if admin {
		line("admin.enableServer", "true")
		line("admin.serverAddress", "127.0.0.1")
		line("admin.serverPort", p.admin)
	} else {
		line("admin.enableServer", "false")
	}
	for i, q := range peers {
		line("server."+strconv.Itoa(i+1), fmt.Sprintf("127.0.0.1:%d:%d", q.peer, q.election))
	}
	return b.String()
}

// logback.xml (ZooKeeper 3.8+ binary releases) and log4j.properties (older
// releases) are put first on the class path so a server from any layout
// logs to the console, that is, to the member's log file.
const logbackXML = `<configuration>
  <appender name="CONSOLE" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%d{ISO8601} [myid:%X{myid}] - %-5p [%t:%C{1}@%L] - %m%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="CONSOLE"/></root>
</configuration>
`

const log4jProperties = `log4j.rootLogger=INFO, CONSOLE
log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender
log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout
log4j.appender.CONSOLE.layout.ConversionPattern=%d{ISO8601} - %-5p [%t:%C{1}@%L] - %m%n
`

// writeMemberFiles writes zoo.cfg, the logging configs and, for a
// replicated ensemble, the myid file.
func writeMemberFiles(m *member, cfg string, replicated bool) error {
	for _, dir := range []string{m.confDir, m.dataDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("ensemble: %w", err)
		}
	}
	files := map[string]string{
		m.configFile:                                 cfg,
		filepath.Join(m.confDir, "logback.xml"):      logbackXML,
		filepath.Join(m.confDir, "log4j.properties"): log4jProperties,
	}
	if replicated {
		files[filepath.Join(m.dataDir, "myid")] = strconv.Itoa(m.id) + "\n"
	}
	for path, content := range files {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return fmt.Errorf("ensemble: %w", err)
		}
	}
	return nil
}
