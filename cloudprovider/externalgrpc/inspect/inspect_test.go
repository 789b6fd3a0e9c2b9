package inspect

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
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
	if code != 1 || out != "" || !strings.Contains(stderr, "cannot connect to the server at "+addr) || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("exit %d out %q stderr %q", code, out, stderr)
	}
}

// TestMainServerAnsweredUnavailable: a server that answers Unavailable
// itself is not reported as one that cannot be reached.
func TestMainServerAnsweredUnavailable(t *testing.T) {
	p := newFakeProvider()
	p.groupsErr = cloudprovider.Errorf(cloudprovider.ErrUnavailable, "cloud API is down for maintenance")
	addr := serve(t, p, nil, nil)
	code, _, stderr := inspectRun(t, "--address", addr, "--refresh=false")
	if code != 1 || !strings.Contains(stderr, "the server at "+addr+" answered Unavailable: ") ||
		!strings.Contains(stderr, "down for maintenance") || strings.Contains(stderr, "cannot connect") {
		t.Fatalf("exit %d stderr %q", code, stderr)
	}
}

func TestMainHelp(t *testing.T) {
	code, _, stderr := inspectRun(t, "--help")
	if code != 0 || !strings.Contains(stderr, "Read-only unless --scale-up or --delete") || !strings.Contains(stderr, "-cloud-config") {
		t.Fatalf("exit %d stderr %q", code, stderr)
	}
}

// TestMistakesGetOneErrorLine: a bad flag or value is one "error:" line and
// exit 2, for inspect and probe alike, and nothing reaches the server.
func TestMistakesGetOneErrorLine(t *testing.T) {
	cases := []struct {
		name string
		main func(context.Context, []string, io.Writer, io.Writer) int
		args []string
		want string
	}{
		{"inspect unknown flag", Main, []string{"--frobnicate"}, "-frobnicate"},
		{"probe unknown flag", ProbeMain, []string{"--frobnicate"}, "-frobnicate"},
		{"scale-up without a delta", Main, []string{"--scale-up", "workers"}, "workers=1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb strings.Builder
			code := tc.main(context.Background(), tc.args, &out, &errb)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr %q", code, errb.String())
			}
			if s := errb.String(); strings.Count(s, "\n") != 1 || !strings.HasPrefix(s, "error: ") || !strings.Contains(s, tc.want) {
				t.Fatalf("stderr is not one error line naming %q: %q", tc.want, s)
			}
		})
	}
}
