package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/simcloud"
)

// TestSimulateFaultsReachTheCloudCalls runs the binary's main path with
// --simulate and a fault mix in which every cloud request fails with a 5xx:
// the first snapshot fails, the server serves not-ready, the provider's
// cloud-call metric counts 503 answers, build_info and the failed refresh
// are published, and the simulated cloud's state
// endpoint counts the faults it injected.
func TestSimulateFaultsReachTheCloudCalls(t *testing.T) {
	for _, provider := range []string{"vultr", "volcengine", "exoscale"} {
		t.Run(provider, func(t *testing.T) {
			if _, ok := registry.Lookup(provider); !ok {
				t.Skipf("%s is not compiled in", provider)
			}
			metricsURL := simServeMetrics(t, provider, "--simulate-faults", "5xx:1")
			get := func(path string) (int, string) {
				t.Helper()
				resp, err := http.Get(metricsURL + path)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			// The first snapshot was attempted (and failed) before the
			// addresses were printed, so its requests are counted already.
			if code, _ := get("/readyz"); code != http.StatusServiceUnavailable {
				t.Errorf("/readyz answered %d with every cloud request failing, want 503", code)
			}
			_, body := get("/metrics")
			want := regexp.MustCompile(`(?m)^cluster_autoscaler_provider_cloud_requests_total\{code="503",.*provider="` + provider + `"\} [1-9]`)
			if !want.MatchString(body) {
				t.Errorf("/metrics counts no 503 answer from the simulated cloud:\n%s", grepLines(body, "cloud_requests_total"))
			}
			// Not ready, yet up: build_info is there, so the alerts tell
			// "refreshes failing" from "provider absent".
			info := regexp.MustCompile(`(?m)^cluster_autoscaler_provider_build_info\{goversion="` + regexp.QuoteMeta(runtime.Version()) + `",provider="` + provider + `",version="` + regexp.QuoteMeta(version) + `"\} 1$`)
			if !info.MatchString(body) {
				t.Errorf("/metrics has no build_info series for %s %s:\n%s", provider, version, grepLines(body, "build_info"))
			}
			if !regexp.MustCompile(`(?m)^cluster_autoscaler_provider_refresh_errors_total [1-9]`).MatchString(body) {
				t.Errorf("/metrics counts no failed refresh:\n%s", grepLines(body, "refresh_errors"))
			}
			st, err := simcloud.ReadState(context.Background(), http.DefaultClient, metricsURL+simcloud.StatePath)
			if err != nil {
				t.Fatal(err)
			}
			if st.Faults[simcloud.FaultServerError] == 0 || st.Passed != 0 || len(st.Groups) == 0 {
				t.Errorf("state: faults %v, passed %d, %d groups; want 5xx faults only and the demo groups", st.Faults, st.Passed, len(st.Groups))
			}
		})
	}
}

// TestSimulateWithoutFaultsInjectsNone: the state endpoint serves the demo
// cluster and counts no fault when --simulate-faults is not given.
func TestSimulateWithoutFaultsInjectsNone(t *testing.T) {
	if _, ok := registry.Lookup("vultr"); !ok {
		t.Skip("vultr is not compiled in")
	}
	metricsURL := simServeMetrics(t, "vultr")
	st, err := simcloud.ReadState(context.Background(), http.DefaultClient, metricsURL+simcloud.StatePath)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Faults) != 0 || st.Passed != 0 || len(st.Groups) != 3 {
		t.Fatalf("state without --simulate-faults: faults %v passed %d, %d groups (want none, 0, the 3 demo pools)", st.Faults, st.Passed, len(st.Groups))
	}
	resp, err := http.Post(metricsURL+simcloud.StatePath, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST %s answered %d; the state is read-only", simcloud.StatePath, resp.StatusCode)
	}
}

// simServeMetrics runs the binary with --simulate for provider and extra
// flags, and returns its metrics base URL once it serves. The server stops
// when the test ends and must exit 0.
func simServeMetrics(t *testing.T, provider string, extra ...string) string {
	t.Helper()
	args := append([]string{"--cloud-provider", provider, "--simulate", "--address", "127.0.0.1:0", "--metrics-address", "127.0.0.1:0"}, extra...)
	pr := startRun(t, args)
	sc := bufio.NewScanner(pr)
	metricsURL := ""
	for sc.Scan() {
		line := sc.Text()
		if m := regexp.MustCompile(`^Metrics on (http://\S+)/metrics`).FindStringSubmatch(line); m != nil {
			metricsURL = m[1]
		}
		if strings.HasPrefix(line, "Serving ") {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if metricsURL == "" {
		t.Fatal("the server did not print its metrics address")
	}
	return metricsURL
}
