package cluster

import (
	"context"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/zkherd/zkherd/ensemble"
)

// UpOptions say where `cluster up` writes.
type UpOptions struct {
	// Print prints the ensemble's description once it serves: how to
	// connect to it, in the command's terms (its flags), as text or JSON.
	Print func(Info) error
	// Log receives the live notices (member deaths, leader changes,
	// commands run) and the stop messages.
	Log io.Writer
}

// Up keeps ens, a local ensemble just started, until ctx ends, as
// `zkherd cluster up` does: it records ens for other zkherd processes
// (WriteRecord), serves their member commands (Serve), reports member
// deaths and leader changes (Watch), prints how to connect, and on ctx's
// end stops ens and removes the record. It is one function so that the
// command and its tests stop the ensemble, the record and the goroutines
// in the same order.
func Up(ctx context.Context, ens *ensemble.Ensemble, o UpOptions) error {
	notices := func(s string) { fmt.Fprintf(o.Log, "%s  %s\n", time.Now().Format("15:04:05"), s) }
	token := NewToken()
	ctl := NewController(ens, token, notices)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("control endpoint: %w", err)
	}
	sctx, stopServing := context.WithCancel(context.WithoutCancel(ctx))
	served := make(chan struct{})
	go func() {
		defer close(served)
		ctl.Serve(sctx, l)
	}()
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		ctl.Watch(sctx, time.Second)
	}()
	stop := func() {
		stopServing()
		<-served
		<-watched
	}
	defer stop()
	if remove, err := WriteRecord(ens, l.Addr().String(), token); err == nil {
		defer remove()
	} else {
		notices(fmt.Sprintf("cannot write the cluster record (%v): cluster kill/pause/resume/restart will not find this ensemble", err))
	}

	if err := o.Print(Describe(ctx, ens)); err != nil {
		return err
	}
	<-ctx.Done()
	fmt.Fprintln(o.Log, "\nstopping the ensemble...")
	stop()
	if err := ens.Stop(); err != nil {
		return fmt.Errorf("stopping the ensemble: %w", err)
	}
	fmt.Fprintln(o.Log, "stopped; nothing left behind.")
	return nil
}

// Info is what `cluster up` prints once the ensemble serves; its JSON
// form is what -o json prints.
type Info struct {
	ConnectString string             `json:"connect_string"`
	Members       []InfoMember       `json:"members"`
	TLS           *ensemble.TLSFiles `json:"tls,omitempty"`
	// Flags are the command line's flags that connect to it (the TLS
	// files), set by the command that prints Info (UpOptions.Print).
	Flags string `json:"flags,omitempty"`
}

// InfoMember is one member of Info.
type InfoMember struct {
	ID       int    `json:"id"`
	Address  string `json:"address"`
	Role     string `json:"role"`
	PID      int    `json:"pid"`
	AdminURL string `json:"admin_url,omitempty"`
	LogFile  string `json:"log_file"`
}

// Describe reads ens's members and their roles.
func Describe(ctx context.Context, ens *ensemble.Ensemble) Info {
	leader, _ := ens.Leader(context.WithoutCancel(ctx))
	members := ens.Members()
	info := Info{ConnectString: ens.ConnectString(), TLS: ens.TLS()}
	for _, m := range members {
		role := "follower"
		switch {
		case len(members) == 1:
			role = "standalone"
		case m.ID == leader:
			role = "leader"
		}
		info.Members = append(info.Members, InfoMember{ID: m.ID, Address: m.ClientAddr, Role: role, PID: m.PID, AdminURL: m.AdminURL, LogFile: m.LogFile})
	}
	return info
}
