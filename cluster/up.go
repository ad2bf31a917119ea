package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/zkherd/zkherd/ensemble"
)

// UpOptions say where `cluster up` writes.
type UpOptions struct {
	// JSON prints the ensemble's description (Info) as JSON rather than text.
	JSON bool
	// Out receives the description; Log the live notices (member deaths,
	// leader changes, commands run) and the stop messages.
	Out, Log io.Writer
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

	info := Describe(ctx, ens)
	if o.JSON {
		enc := json.NewEncoder(o.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(info); err != nil {
			return err
		}
	} else {
		info.WriteText(o.Out)
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
	// Flags are the global flags that connect to it (TLS files).
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
	if t := ens.TLS(); t != nil {
		info.Flags = fmt.Sprintf("--tls-ca %s --tls-cert %s --tls-key %s", t.CA, t.Cert, t.Key)
	}
	return info
}

// WriteText writes info for a person: the members, the connect string and
// the commands that use it.
func (info Info) WriteText(out io.Writer) {
	fmt.Fprintf(out, "ZooKeeper ensemble up: %d member(s)", len(info.Members))
	if info.TLS != nil {
		fmt.Fprint(out, ", TLS only (client certificates required)")
	}
	fmt.Fprintln(out)
	for _, m := range info.Members {
		admin := m.AdminURL
		if admin == "" {
			admin = "(AdminServer off)"
		}
		fmt.Fprintf(out, "  member %d  %-21s %-10s pid %-7d admin %s\n", m.ID, m.Address, m.Role, m.PID, admin)
	}
	fmt.Fprintf(out, "\nconnect string: %s\n", info.ConnectString)
	conn := "--server " + info.ConnectString
	if info.TLS != nil {
		fmt.Fprintf(out, "TLS: CA %s\n     client certificate %s, key %s\n", info.TLS.CA, info.TLS.Cert, info.TLS.Key)
		conn += " " + info.Flags
	}
	fmt.Fprintf(out, "\n  zkherd cluster status %s\n  zkherd inspect %s\n  zkherd cluster kill|pause|resume|restart MEMBER\n\nPress Ctrl-C to stop and remove it.\n", conn, conn)
}
