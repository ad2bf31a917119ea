package main

import (
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/zkherd/zkherd/internal/credentials"
	"github.com/zkherd/zkherd/loadrun"
)

// registerLaunchFlags adds the flags that start a distributed run's
// other processes (--spawn, --hosts, --ssh-option) or number them
// (--index).
func registerLaunchFlags(f *pflag.FlagSet, q *loadrun.Request) {
	f.IntVar(&q.Spawn, "spawn", 0, "start the run for this many processes, this one included, and the others on this machine (zkherd load --join, stopped with this one)")
	f.IntVar(&q.Index, "index", 0, "with --processes and --run-id: this process's number in a run whose processes start together (a Kubernetes Indexed Job's $(JOB_COMPLETION_INDEX)): 0 starts the run, the others wait for it and join")
	f.StringSliceVar(&q.Hosts, "hosts", nil, "start the run with one more process on each of these hosts ([user@]host, comma-separated) over ssh, stopped with this one: zkherd from the host's PATH if it is this binary, else this binary copied there; needs --server")
	f.StringArrayVar(&q.SSHOptions, "ssh-option", nil, "with --hosts: an ssh option as ssh -o takes it, such as Port=2222 or IdentityFile=~/.ssh/load (repeatable)")
}

// launchGiven records which of the launch flags the user gave.
func launchGiven(f *pflag.FlagSet, q *loadrun.Request) {
	q.SpawnGiven, q.HostsGiven, q.IndexGiven = f.Changed("spawn"), f.Changed("hosts"), f.Changed("index")
}

// joiners is how the processes this one launches reach the servers as it
// does: the same binary, session timeout and TLS files (absolute paths,
// the same on every host) and the credentials in their environment,
// never on their command line.
func (o *loadOptions) joiners(g *globalOptions) loadrun.Joiners {
	var j loadrun.Joiners
	if exe, err := os.Executable(); err == nil {
		j.Executable = exe
	}
	var shared []string // the settings a launched process repeats
	if o.req.SessionTimeoutGiven {
		shared = append(shared, "--session-timeout", o.req.SessionTimeout.String())
	}
	for _, f := range []struct{ flag, value string }{
		{"--tls-ca", g.tlsFiles.CA}, {"--tls-cert", g.tlsFiles.Cert}, {"--tls-key", g.tlsFiles.Key},
	} {
		if f.value != "" {
			abs, err := filepath.Abs(f.value)
			if err != nil {
				abs = f.value
			}
			shared = append(shared, f.flag, abs)
		}
	}
	if g.tlsFiles.ServerName != "" {
		shared = append(shared, "--tls-server-name", g.tlsFiles.ServerName)
	}
	j.Command = func(c loadrun.JoinCommand) []string { return joinArgs(c, shared) }
	if g.auth != "" {
		j.Env = map[string]string{credentials.EnvVar: g.auth}
	}
	return j
}

// joinArgs is the zkherd command line that joins the distributed run c
// names: the line printed for a user to run by hand, or, launched, the
// one this process starts (with shared, the settings it repeats).
func joinArgs(c loadrun.JoinCommand, shared []string) []string {
	args := []string{"load", "--join", c.ID, "--server", c.Server}
	if c.Launched {
		args = append(args, "--join-timeout", c.Timeout.String(), "--no-tui")
		args = append(args, shared...)
	}
	if c.Coord != "" {
		args = append(args, "--coord-server", c.Coord)
	}
	return args
}
