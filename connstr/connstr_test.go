package connstr

import (
	"errors"
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want ConnectString
	}{
		{"one host", "127.0.0.1:2181", ConnectString{Servers: []string{"127.0.0.1:2181"}}},
		{"default port", "zk1", ConnectString{Servers: []string{"zk1:2181"}}},
		{"several with chroot", "a:1,b:2,c/app/locks", ConnectString{Servers: []string{"a:1", "b:2", "c:2181"}, Chroot: "/app/locks"}},
		{"spaces trimmed", " a:1 , b:2 ", ConnectString{Servers: []string{"a:1", "b:2"}}},
		{"ipv6", "[::1]:2181,[::1]", ConnectString{Servers: []string{"[::1]:2181", "[::1]:2181"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"", "a:b", "a:0", "a:70000", ":2181", "a,,b", "a:1/", "a:1//x", "::1:2181", "a b:1"} {
		t.Run(in, func(t *testing.T) {
			_, err := Parse(in)
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("Parse(%q) error = %v, want ErrMalformed", in, err)
			}
		})
	}
}

func TestString(t *testing.T) {
	cs, err := Parse("a:1,b:2/x")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cs.String(), "a:1,b:2/x"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
