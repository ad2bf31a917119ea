package loadgen

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestOpenErrNamesNoFlag: a server refusing connections per address is
// explained with the values to change named as the command names them
// (Options.Name), bare without one: loadgen never names a flag.
func TestOpenErrNamesNoFlag(t *testing.T) {
	for _, tt := range []struct {
		name func(string) string
		want []string
	}{
		{nil, []string{"with source-addrs", "run fewer clients"}},
		{func(in string) string { return "--" + in }, []string{"with --source-addrs", "run fewer --clients"}},
	} {
		p := &sessionParams{servers: []string{"127.0.0.1:2181"}, name: tt.name, serverUp: func() bool { return true }}
		msg := p.explainOpenErr(context.Background(), errEarlyClose, 60, 60, 100).Error()
		if tt.name == nil && strings.Contains(msg, "--") {
			t.Errorf("loadgen's message names a flag: %q", msg)
		}
		for _, w := range tt.want {
			if !strings.Contains(msg, w) {
				t.Errorf("message %q lacks %q", msg, w)
			}
		}
		if !errors.Is(p.explainOpenErr(context.Background(), errEarlyClose, 60, 60, 100), ErrRefused) {
			t.Errorf("not ErrRefused")
		}
	}
}
