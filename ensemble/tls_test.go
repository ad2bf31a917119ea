package ensemble_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zkherd/zkherd/connstr"
	"github.com/zkherd/zkherd/ensemble"
	"github.com/zkherd/zkherd/ensemble/enstest"
)

// TestTLSOnly checks a TLS ensemble serves four-letter words and the
// AdminServer over TLS only, with the certificates it made, and refuses
// plain clients and clients without its CA.
func TestTLSOnly(t *testing.T) {
	ens := enstest.StartTLS(t, 1)
	files := ens.TLS()
	if files == nil {
		t.Fatal("TLS() is nil for a TLS ensemble")
	}
	addr := ens.Servers()[0]
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	cfg, err := connstr.TLS{CA: files.CA, Cert: files.Cert, Key: files.Key}.Config()
	if err != nil {
		t.Fatalf("client config from the ensemble's files: %v", err)
	}
	conn, err := connstr.Dial(ctx, addr, cfg)
	if err != nil {
		t.Fatalf("TLS dial with the ensemble's files: %v", err)
	}
	io.WriteString(conn, "srvr")
	reply, _ := io.ReadAll(conn)
	conn.Close()
	if !strings.Contains(string(reply), "Mode: standalone") {
		t.Errorf("srvr over TLS = %q, want a Mode line", reply)
	}

	// A plain client gets no answer.
	var d net.Dialer
	if pc, err := d.DialContext(ctx, "tcp", addr); err == nil {
		pc.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(pc, "srvr")
		got, _ := io.ReadAll(pc)
		pc.Close()
		if strings.Contains(string(got), "Mode:") {
			t.Errorf("plain srvr answered on the TLS port: %q", got)
		}
	}

	// A client without the CA fails verification.
	noCA, _ := connstr.TLS{Cert: files.Cert, Key: files.Key}.Config()
	_, err = connstr.Dial(ctx, addr, noCA)
	var unknown *tls.CertificateVerificationError
	if !errors.As(err, &unknown) {
		t.Errorf("dial without the CA: err = %v, want a certificate verification error", err)
	}

	m := ens.Members()[0]
	if m.AdminURL == "" {
		if inst, _ := ensemble.Find(); inst.AdminServer {
			t.Fatalf("the AdminServer did not start over HTTPS; see %s", m.LogFile)
		}
		return // this installation cannot run an AdminServer at all
	}
	if !strings.HasPrefix(m.AdminURL, "https://") {
		t.Fatalf("AdminURL = %q, want https", m.AdminURL)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: ens.TLSConfig()}, Timeout: 10 * time.Second}
	resp, err := hc.Get(m.AdminURL + "/ruok")
	if err != nil {
		t.Fatalf("AdminServer over HTTPS: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("AdminServer ruok: %s", resp.Status)
	}
}

// TestFiveMembers: an ensemble of 5 serves with one leader and survives
// two members down (a quorum of 3).
func TestFiveMembers(t *testing.T) {
	ens := enstest.Start(t, 5)
	if got := len(ens.Members()); got != 5 {
		t.Fatalf("%d members, want 5", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	leader, err := ens.WaitLeader(ctx)
	if err != nil {
		t.Fatalf("no leader: %v", err)
	}
	down := 0
	for _, m := range ens.Members() {
		if m.ID != leader && down < 2 {
			if err := ens.Kill(m.ID); err != nil {
				t.Fatal(err)
			}
			down++
		}
	}
	if _, err := ens.WaitLeader(ctx); err != nil {
		t.Errorf("no leader with 3 of 5 members up: %v", err)
	}
}
