package faultproxy_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/ensemble/enstest"
	"github.com/zkherd/zkherd/faultproxy"
)

// connectEvents opens a session through addr and returns its events.
func connectEvents(t *testing.T, addr string) (*zk.Conn, <-chan zk.Event) {
	t.Helper()
	conn, events, err := zk.Connect([]string{addr}, sessionTimeout, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatalf("zk.Connect(%s): %v", addr, err)
	}
	t.Cleanup(conn.Close)
	waitEvent(t, events, zk.StateHasSession)
	return conn, events
}

// waitEvent waits for a session event in state want, for at most 30 s.
func waitEvent(t *testing.T, events <-chan zk.Event, want zk.State) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.Type == zk.EventSession && ev.State == want {
				return
			}
		case <-deadline:
			t.Fatalf("no %v event after 30s", want)
		}
	}
}

func TestSessions(t *testing.T) {
	ens := enstest.Start(t, 1)
	server := ens.Servers()[0]
	direct := connect(t, server)
	ctx := context.Background()

	t.Run("sessions and links are seen", func(t *testing.T) {
		p := newProxy(t, server)
		c := connect(t, p.Addr())
		got := p.Sessions()
		if len(got) != 1 || got[0].ID != c.SessionID() || len(got[0].Passwd) == 0 || got[0].Timeout <= 0 {
			t.Fatalf("Sessions() = %+v, want one with id 0x%x, a password and a timeout", got, c.SessionID())
		}
		links := p.Links()
		if len(links) != 1 || links[0].Session != c.SessionID() || links[0].Conn != got[0].Conn {
			t.Errorf("Links() = %+v, want one carrying 0x%x on conn %d", links, c.SessionID(), got[0].Conn)
		}
	})

	t.Run("expire session ends it on the server at once", func(t *testing.T) {
		p := newProxy(t, server)
		c, events := connectEvents(t, p.Addr())
		if _, err := c.Create("/eph", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		_, _, watch, err := direct.ExistsW("/eph")
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := p.ExpireSession(ctx, c.SessionID()); err != nil {
			t.Fatalf("ExpireSession: %v", err)
		}
		select {
		case ev := <-watch:
			if ev.Type != zk.EventNodeDeleted {
				t.Errorf("watch event %v, want %v", ev.Type, zk.EventNodeDeleted)
			}
		case <-time.After(sessionTimeout / 2):
			t.Fatalf("ephemeral node still there %v after the expiry, want it gone at once", sessionTimeout/2)
		}
		// The server ended the session: timed here, not at the client's
		// StateExpired, which waits for go-zookeeper's reconnection (12 s
		// once in CI, three packages at once on two cores).
		if took := time.Since(start); took >= sessionTimeout {
			t.Errorf("expiry took %v, want well under the session timeout %v", took, sessionTimeout)
		}
		waitEvent(t, events, zk.StateExpired)
		err = p.ExpireSession(ctx, c.SessionID())
		if !errors.Is(err, faultproxy.ErrNoSession) {
			t.Errorf("second ExpireSession = %v, want ErrNoSession", err)
		}
	})

	t.Run("expire unknown session", func(t *testing.T) {
		p := newProxy(t, server)
		if err := p.ExpireSession(ctx, 12345); !errors.Is(err, faultproxy.ErrNoSession) {
			t.Errorf("ExpireSession(12345) = %v, want ErrNoSession", err)
		}
	})

	t.Run("held reconnect waits for release", func(t *testing.T) {
		p := newProxy(t, server)
		c, events := connectEvents(t, p.Addr())
		id := c.SessionID()
		arrived, release := p.HoldReconnects(id)
		defer release()
		if got := p.CutSession(id); got != 1 {
			t.Fatalf("CutSession = %d, want 1", got)
		}
		select {
		case <-arrived:
		case <-time.After(30 * time.Second):
			t.Fatal("the client's reconnection never arrived")
		}
		if st := c.State(); st == zk.StateHasSession {
			t.Errorf("state %v while the reconnection is held, want no session", st)
		}
		release()
		waitEvent(t, events, zk.StateHasSession)
		if got := c.SessionID(); got != id {
			t.Errorf("session 0x%x after release, want 0x%x", got, id)
		}
	})

	t.Run("drop one connection", func(t *testing.T) {
		p := newProxy(t, server)
		a := connect(t, p.Addr())
		b := connect(t, p.Addr())
		var conn int
		for _, s := range p.Sessions() {
			if s.ID == a.SessionID() {
				conn = s.Conn
			}
		}
		if !p.DropConn(conn, true) {
			t.Fatalf("DropConn(%d) found no connection", conn)
		}
		res := make(chan error, 1)
		go func() {
			_, _, err := a.Exists("/")
			res <- err
		}()
		if _, _, err := b.Exists("/"); err != nil {
			t.Errorf("the other connection: %v", err)
		}
		select {
		case err := <-res:
			t.Fatalf("Exists returned %v through a dropped connection", err)
		case <-time.After(200 * time.Millisecond):
		}
		p.DropConn(conn, false)
		if err := <-res; !errors.Is(err, zk.ErrConnectionClosed) {
			t.Errorf("Exists after the drop = %v, want %v", err, zk.ErrConnectionClosed)
		}
		waitState(t, a, zk.StateHasSession)
		if _, _, err := a.Exists("/"); err != nil {
			t.Errorf("after the drop ended: %v", err)
		}
	})

	t.Run("cut one connection", func(t *testing.T) {
		p := newProxy(t, server)
		a := connect(t, p.Addr())
		b := connect(t, p.Addr())
		var conn int
		for _, l := range p.Links() {
			if l.Session == a.SessionID() {
				conn = l.Conn
			}
		}
		if !p.CutConn(conn) {
			t.Fatalf("CutConn(%d) found no connection", conn)
		}
		if p.CutConn(1 << 20) {
			t.Errorf("CutConn of a connection that never was reported true")
		}
		waitState(t, a, zk.StateHasSession)
		if got := a.SessionID(); got == 0 {
			t.Errorf("no session after the cut")
		}
		if _, _, err := b.Exists("/"); err != nil {
			t.Errorf("the other connection: %v", err)
		}
	})
}
