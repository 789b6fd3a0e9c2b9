package externalgrpc

import (
	"strings"
	"testing"
)

// FuzzParseAddress checks --address parsing: accepted tcp addresses have a
// port, accepted unix paths are absolute.
func FuzzParseAddress(f *testing.F) {
	for _, s := range []string{"127.0.0.1:8086", "[::1]:8086", "unix:///run/x.sock", "unix:/run/x.sock", "unix:rel", "/run/x.sock", ":8086", "host:", "dns:///host:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAddress(s)
		if err != nil {
			return
		}
		switch a.Network {
		case "unix":
			if !strings.HasPrefix(a.Addr, "/") {
				t.Fatalf("%q: unix path %q is not absolute", s, a.Addr)
			}
		case "tcp":
			if i := strings.LastIndex(a.Addr, ":"); i < 0 || i == len(a.Addr)-1 {
				t.Fatalf("%q: tcp address %q has no port", s, a.Addr)
			}
		default:
			t.Fatalf("%q: network %q", s, a.Network)
		}
	})
}
