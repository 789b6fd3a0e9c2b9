package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/grpctest/legacyca"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

// binaryEnv names a built binary to run instead of main's code in-process
// (.ci/run sets it to the one it built); the in-process run is main() minus
// os.Exit, with the same arguments.
const binaryEnv = "CAP_BINARY"

// runSimulated starts `go run . --cloud-provider=<p> --simulate` on free
// ports, as the built binary named by CAP_BINARY or else in-process, and
// returns the gRPC address and the metrics base URL; the server stops when
// the test ends.
func runSimulated(t *testing.T, provider string) (addr, metricsURL string) {
	t.Helper()
	args := []string{"--cloud-provider=" + provider, "--simulate", "--address", "127.0.0.1:0", "--metrics-address", "127.0.0.1:0"}
	var out io.Reader
	if bin := os.Getenv(binaryEnv); bin != "" {
		cmd := exec.Command(bin, args...)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatalf("%s=%s: %v", binaryEnv, bin, err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			if err := cmd.Wait(); err != nil {
				t.Errorf("binary exit: %v", err)
			}
		})
		out = stdout
	} else {
		out = startRun(t, args)
	}
	sc := bufio.NewScanner(out)
	for addr == "" && sc.Scan() {
		line := sc.Text()
		if m := regexp.MustCompile(`^Metrics on (http://\S+)/metrics`).FindStringSubmatch(line); m != nil {
			metricsURL = m[1]
		}
		if m := regexp.MustCompile(`^Serving \S+ on (\S+) \(plaintext\)`).FindStringSubmatch(line); m != nil {
			addr = m[1]
		}
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	if addr == "" || metricsURL == "" {
		t.Fatalf("no serving banner (grpc %q, metrics %q)", addr, metricsURL)
	}
	return addr, metricsURL
}

// TestSimulatedBinaryServesOldCA is the acceptance check: the binary
// run with --simulate answers a CA 1.34.1-layout client's TemplateNodeInfo,
// GetOptions and Pricing correctly for every provider, and its metrics count the
// legacy requests. Unimplemented is what CA 1.29+ reads as "not
// implemented" on these optional RPCs (defaults, no price for that option).
func TestSimulatedBinaryServesOldCA(t *testing.T) {
	want := map[string]struct{ pricing, options codes.Code }{
		"vultr":      {pricing: codes.OK, options: codes.Unimplemented},
		"volcengine": {pricing: codes.Unimplemented, options: codes.Unimplemented},
		"exoscale":   {pricing: codes.Unimplemented, options: codes.Unimplemented},
	}
	for provider, exp := range want {
		t.Run(provider, func(t *testing.T) {
			if _, ok := registry.Lookup(provider); !ok {
				t.Skipf("%s is not compiled in", provider)
			}
			addr, metricsURL := runSimulated(t, provider)
			conn := dialServer(t, addr)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			groups, err := legacyca.NewClient(conn).NodeGroups(ctx, &legacyca.NodeGroupsRequest{})
			if err != nil || len(groups.GetNodeGroups()) == 0 {
				t.Fatalf("NodeGroups = %v, %v", groups, err)
			}
			templates, overridden := 0, 0
			for _, g := range groups.GetNodeGroups() {
				a := legacyca.CheckOptionalRPCs(ctx, t, conn, g.GetId())
				if a.Template != nil {
					templates++
				}
				// The demo seeds one group with per-group settings (its debug
				// line says so): it answers its overrides, the others exp.options.
				wantOptions := exp.options
				if strings.Contains(g.GetDebug(), "settings from") {
					wantOptions = codes.OK
					overridden++
					if got := time.Duration(a.Options.GetScaleDownUnneededTime().GetDuration()); got != 5*time.Minute {
						t.Errorf("%s: scale-down-unneeded %s for CA 1.34.1, want the demo's 5m", g.GetId(), got)
					}
				}
				if a.NodePriceCode != exp.pricing || a.PodPriceCode != exp.pricing || a.OptionsCode != wantOptions {
					t.Errorf("%s: pricing %s/%s options %s, want pricing %s options %s",
						g.GetId(), a.NodePriceCode, a.PodPriceCode, a.OptionsCode, exp.pricing, wantOptions)
				}
				if exp.pricing == codes.OK && a.NodePrice <= 0 {
					t.Errorf("%s: node price %v", g.GetId(), a.NodePrice)
				}
			}
			if templates == 0 {
				t.Fatal("no group answered a template to the old layout")
			}
			if overridden != 1 {
				t.Fatalf("%d groups show per-group settings, want the demo's one", overridden)
			}

			resp, err := http.Get(metricsURL + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !regexp.MustCompile(`cluster_autoscaler_provider_ca_protocol_requests_total\{generation="legacy"\} [1-9]`).Match(body) {
				t.Fatalf("metrics do not count the legacy requests:\n%s", grepLines(string(body), "ca_protocol"))
			}
			// The demo's malformed entry is reported, for its group only.
			if !regexp.MustCompile(`cluster_autoscaler_provider_node_group_setting_errors\{node_group="[^"]+"\} 1\n`).Match(body) ||
				strings.Count(grepLines(string(body), "node_group_setting_errors{"), " 1") != 1 {
				t.Fatalf("metrics do not report the demo's one malformed setting:\n%s", grepLines(string(body), "setting_errors"))
			}
		})
	}
}

func grepLines(s, substr string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
