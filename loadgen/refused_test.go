package loadgen

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestEarlyCloseMessage is the message for a server that closes new
// connections before answering their handshake while it answers the
// run's own session: it blames maxClientCnxns only when the server's
// conf says there is a limit, says it is not that when the conf says 0,
// and names it as one possible cause when the conf cannot be read.
func TestEarlyCloseMessage(t *testing.T) {
	const blame = "it limits connections per client address"
	tests := []struct {
		name    string
		limit   string
		err     error
		want    []string
		wantNot []string
	}{
		{name: "no limit", limit: "0",
			want:    []string{"maxClientCnxns=0 (no limit per client address), so not that", "out of its quorum"},
			wantNot: []string{blame, "raise maxClientCnxns"}},
		{name: "limit", limit: "60",
			want: []string{blame + " (its conf says maxClientCnxns=60)", "raise maxClientCnxns", "more loopback addresses with --source-addrs"}}, // named as the command names it
		{name: "conf unreadable", err: errors.New("conf is not executed because it is not in the whitelist"),
			want:    []string{"One possible cause is a limit of connections per client address", "not in the whitelist", "out of its quorum"},
			wantNot: []string{blame}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &sessionParams{
				servers: []string{"127.0.0.1:2181"}, sourceAddrs: 1,
				name:     func(input string) string { return "--" + input }, // as package main names its flags
				serverUp: func() bool { return true },
				maxCnxns: func(context.Context) (string, error) { return tt.limit, tt.err },
			}
			err := p.explainOpenErr(context.Background(), errEarlyClose, 99, 98, 200)
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("error %v, want ErrRefused", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, "accepted 98 of 200 sessions, then closed new connections right after they were opened") {
				t.Errorf("message %q does not say what happened", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(msg, w) {
					t.Errorf("message %q says %q, which the server's conf does not support", msg, w)
				}
			}
		})
	}
}
