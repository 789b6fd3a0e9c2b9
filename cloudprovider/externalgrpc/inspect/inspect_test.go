package inspect

import (
	"net"
	"strings"
	"testing"
)

func TestMainRefusesBadInput(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"bad output", []string{"-o", "yaml"}, 2, "table or json"},
		{"bad scale-up", []string{"--scale-up", "g=0"}, 2, "--scale-up"},
		{"bare socket path", []string{"--address", "/run/x.sock"}, 2, "address"},
		{"stray argument", []string{"groups"}, 2, "unexpected arguments"},
		{"unknown flag", []string{"--frobnicate"}, 2, ""},
		{"missing cloud-config", []string{"--cloud-config", "/nonexistent/ca.yaml"}, 2, "cloud config"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := inspectRun(t, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d stderr %q; want %d and %q", code, stderr, tc.code, tc.want)
			}
		})
	}
}

func TestMainServerDown(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	code, out, stderr := inspectRun(t, "--address", addr, "--timeout", "2s")
	if code != 1 || out != "" || !strings.Contains(stderr, "cannot reach the server at "+addr) || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("exit %d out %q stderr %q", code, out, stderr)
	}
}

func TestMainHelp(t *testing.T) {
	code, _, stderr := inspectRun(t, "--help")
	if code != 0 || !strings.Contains(stderr, "Read-only unless --scale-up or --delete") || !strings.Contains(stderr, "-cloud-config") {
		t.Fatalf("exit %d stderr %q", code, stderr)
	}
}
