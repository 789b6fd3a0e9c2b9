package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/inspect"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

const testProvider = "zz-inmemory-test"

func init() {
	registry.RegisterCloudProvider(testProvider, registry.Registration{
		Build: func(ctx context.Context, opts registry.BuildOptions) (cloudprovider.CloudProvider, error) {
			if opts.CloudConfig == "" {
				return nil, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "--cloud-config is required")
			}
			return cloudprovidertest.NewInMemoryProvider(cloudprovidertest.NewInMemoryCloud()), nil
		},
		Simulate: func(ctx context.Context, opts registry.BuildOptions) (*registry.Simulation, error) {
			// Like the real simulators, --nodes must name a simulated group.
			for _, spec := range opts.NodeGroupSpecs {
				if !strings.HasSuffix(spec, ":pool-a") {
					return nil, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "--nodes %s: no such simulated group", spec)
				}
			}
			p := cloudprovidertest.NewInMemoryProvider(cloudprovidertest.NewInMemoryCloud(
				cloudprovidertest.CloudGroup{ID: "pool-a", Min: 1, Max: 5, Running: 2}))
			return &registry.Simulation{Provider: p, URL: "memory://", Description: "one in-memory pool", Close: func() {}}, nil
		},
		RateLimit: cloudhttp.RateLimit{Rate: 7, Burst: 3},
	})
}

func runArgs(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb strings.Builder
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestRateLimitDefaultsToTheCloud: an empty --cloud-api-rate-limit takes the
// provider's registered default, off disables it, a value overrides it.
func TestRateLimitDefaultsToTheCloud(t *testing.T) {
	reg, _ := registry.Lookup(testProvider)
	if !reg.RateLimit.Enabled() {
		t.Fatalf("%s registers no default rate limit", testProvider)
	}
	for flagValue, want := range map[string]cloudhttp.RateLimit{
		"":     reg.RateLimit,
		"off":  {},
		"2:5":  {Rate: 2, Burst: 5},
		"0.25": {Rate: 0.25},
	} {
		c := config{provider: testProvider, cloudRateLimit: flagValue}
		if got := c.buildOptions(nil).RateLimit; got != want {
			t.Errorf("--cloud-api-rate-limit %q: %v, want %v", flagValue, got, want)
		}
	}
}

// TestUnknownOutcomeWindowReachesTheGuards: --unknown-outcome-window travels
// to the provider's guards through BuildOptions, 0 turning the quarantine
// off rather than taking the default.
func TestUnknownOutcomeWindowReachesTheGuards(t *testing.T) {
	for flagValue, want := range map[time.Duration]time.Duration{
		groupstate.DefaultUnknownOutcomeWindow: groupstate.DefaultUnknownOutcomeWindow,
		0:                                      groupstate.NoUnknownOutcomeWindow,
		90 * time.Second:                       90 * time.Second,
	} {
		c := config{provider: testProvider, unknownOutcomeWindow: flagValue}
		if got := c.buildOptions(nil).Guard.UnknownOutcomeWindow; got != want {
			t.Errorf("--unknown-outcome-window %s: guards quarantine for %s, want %s", flagValue, got, want)
		}
	}
}

func TestRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.pem")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"bad --nodes spec", []string{"--cloud-provider", testProvider, "--nodes", "1:x:pool"}, `max "x"`},
		{"--nodes max below min", []string{"--cloud-provider", testProvider, "--nodes", "5:2:pool"}, "below min"},
		{"unknown provider", []string{"--cloud-provider", "nimbus"}, `"nimbus" is not compiled in: choose one of`},
		{"unreadable TLS files", []string{"--cloud-provider", testProvider, "--tls-cert-file", missing, "--tls-key-file", missing}, "--tls-cert-file"},
		{"plaintext on all interfaces", []string{"--cloud-provider", testProvider, "--address", "0.0.0.0:8086"}, "--insecure"},
		{"bare socket path", []string{"--cloud-provider", testProvider, "--address", "/run/x.sock"}, "--address"},
		{"stray argument", []string{"--cloud-provider", testProvider, "serve"}, "unexpected arguments"},
		{"unknown flag", []string{"--cloud-provider", testProvider, "--frobnicate"}, "-frobnicate"},
		{"bad flag value", []string{"--shutdown-timeout", "soon"}, "shutdown-timeout"},
		{"negative --unknown-outcome-window", []string{"--cloud-provider", testProvider, "--unknown-outcome-window", "-1s"}, "--unknown-outcome-window"},
		{"staleness bound too short", []string{"--cloud-provider", testProvider, "--max-staleness", "1s"}, "--max-staleness"},
		{"bad rate limit", []string{"--cloud-provider", testProvider, "--cloud-api-rate-limit", "fast"}, "--cloud-api-rate-limit"},
		{"--simulate-faults without --simulate", []string{"--cloud-provider", testProvider, "--simulate-faults", "5xx:0.1"}, "--simulate-faults"},
		{"unknown fault kind", []string{"--cloud-provider", testProvider, "--simulate", "--simulate-faults", "gremlins:0.1"}, `--simulate-faults "gremlins:0.1": unknown fault kind "gremlins"`},
		{"fault without a rate", []string{"--cloud-provider", testProvider, "--simulate", "--simulate-faults", "5xx"}, "--simulate-faults"},
		{"fault rates above 1", []string{"--cloud-provider", testProvider, "--simulate", "--simulate-faults", "5xx:0.6,reset:0.5"}, "--simulate-faults"},
		{"bad fault hold", []string{"--cloud-provider", testProvider, "--simulate", "--simulate-faults", "slow:0.1,hold=soon"}, "--simulate-faults"},
		{"--simulate-cloud-address without --simulate", []string{"--cloud-provider", testProvider, "--simulate-cloud-address", "127.0.0.1:8089"}, "--simulate-cloud-address is where the simulated cloud listens: it needs --simulate"},
		{"--simulate-cloud-address without a port", []string{"--cloud-provider", testProvider, "--simulate", "--simulate-cloud-address", "127.0.0.1"}, `--simulate-cloud-address "127.0.0.1": want host:port`},
		{"profiling without a metrics address", []string{"--cloud-provider", testProvider, "--profiling", "--metrics-address="}, "--profiling"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runArgs(t, tc.args...)
			if code != 2 {
				t.Fatalf("exit code %d, want 2", code)
			}
			if lines := strings.Count(strings.TrimSpace(stderr), "\n"); lines != 0 || !strings.HasPrefix(stderr, "error: ") {
				t.Fatalf("stderr is not one error line: %q", stderr)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Fatalf("stderr %q does not mention %q", stderr, tc.want)
			}
		})
	}
}

func TestCheckConfig(t *testing.T) {
	if code, _, stderr := runArgs(t, "--cloud-provider", testProvider, "--check-config"); code != 2 || !strings.Contains(stderr, "--cloud-config") {
		t.Fatalf("check-config without config: code %d stderr %q", code, stderr)
	}
	if code, out, _ := runArgs(t, "--cloud-provider", testProvider, "--check-config", "--cloud-config", "x"); code != 0 || !strings.Contains(out, "configuration OK") {
		t.Fatalf("check-config: code %d out %q", code, out)
	}
	if code, _, stderr := runArgs(t, "--cloud-provider", testProvider, "--address", "0.0.0.0:1", "--insecure", "--simulate", "--check-config"); code != 0 {
		t.Fatalf("--insecure allows a non-loopback plaintext address: code %d %q", code, stderr)
	}
}

// TestBadCloudConfigExitsTwo: a configuration the provider refuses exits 2
// with the same one line whether found by --check-config or when serving,
// and names the provider once.
func TestBadCloudConfigExitsTwo(t *testing.T) {
	base := []string{"--cloud-provider", testProvider, "--address", "127.0.0.1:0", "--metrics-address", ""}
	_, _, checkErr := runArgs(t, append(base, "--check-config")...)
	for _, mode := range [][]string{{"--check-config"}, nil} {
		code, _, stderr := runArgs(t, append(base, mode...)...)
		if code != 2 {
			t.Errorf("%v: exit code %d, want 2 (%q)", mode, code, stderr)
		}
		if stderr != checkErr || stderr != "error: "+testProvider+": --cloud-config is required\n" {
			t.Errorf("%v: stderr %q (check-config said %q)", mode, stderr, checkErr)
		}
	}
}

func TestProviderErrorNamesTheProviderOnce(t *testing.T) {
	cases := map[string]string{
		"vultr: read cloud config: no such file":  "vultr: read cloud config: no such file",
		"Vultr cloud config: cluster_id required": "Vultr cloud config: cluster_id required",
		"missing EXOSCALE_API_KEY":                "vultr: missing EXOSCALE_API_KEY",
	}
	for in, want := range cases {
		if got := providerError("vultr", errors.New(in)).Error(); got != want {
			t.Errorf("providerError(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCheckConfigSimulate: --check-config --simulate starts the simulated
// cloud and reads it, so a --nodes spec it cannot serve is refused.
func TestCheckConfigSimulate(t *testing.T) {
	code, out, stderr := runArgs(t, "--cloud-provider", testProvider, "--simulate", "--check-config")
	if code != 0 || out != "configuration OK for simulated "+testProvider+": 1 node group\n" {
		t.Fatalf("check-config --simulate: code %d out %q stderr %q", code, out, stderr)
	}
	code, _, stderr = runArgs(t, "--cloud-provider", testProvider, "--simulate", "--check-config", "--nodes", "1:3:nope")
	if code != 2 || !strings.Contains(stderr, "1:3:nope") {
		t.Fatalf("check-config --simulate with an unknown group: code %d stderr %q", code, stderr)
	}
}

func TestMetricsAddressDefaultsToLoopback(t *testing.T) {
	var cfg config
	newFlagSet(&cfg, io.Discard)
	host, _, err := net.SplitHostPort(cfg.metricsAddress)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		t.Fatalf("--metrics-address defaults to %q, want a loopback address", cfg.metricsAddress)
	}
}

// TestDemoEndsWithoutPointingAtTheStoppedServer: make demo stops its server
// on exit, so its closing words must not suggest an inspect against it.
func TestDemoEndsWithoutPointingAtTheStoppedServer(t *testing.T) {
	b, err := os.ReadFile("hack/demo.sh")
	if err != nil {
		t.Fatal(err)
	}
	script := string(b)
	last := strings.LastIndex(script, `inspect --delete "$victim"`)
	if last < 0 {
		t.Fatal("hack/demo.sh no longer deletes a node; update this test")
	}
	tail := script[last:]
	if strings.Contains(tail, "inspect --address") {
		t.Fatalf("hack/demo.sh ends by suggesting an inspect against the server it stops:\n%s", tail)
	}
	if !strings.Contains(tail, "--simulate") {
		t.Fatalf("hack/demo.sh should end by saying how to start a server to explore:\n%s", tail)
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runArgs(t, "--version")
	if code != 0 || !strings.Contains(out, testProvider) || !strings.HasPrefix(out, "cluster-autoscaler-provider ") {
		t.Fatalf("--version: %d %q", code, out)
	}
}

// TestServeSimulatedAndDrainOnSIGTERM runs the binary's main path: simulate,
// serve gRPC and metrics, answer, then exit 0 on SIGTERM.
func TestServeSimulatedAndDrainOnSIGTERM(t *testing.T) {
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		var errb strings.Builder
		done <- run(context.Background(), []string{"--cloud-provider", testProvider, "--simulate",
			"--address", "127.0.0.1:0", "--metrics-address", "127.0.0.1:0"}, pw, &errb)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	var grpcAddr, metricsURL string
	for grpcAddr == "" && sc.Scan() {
		line := sc.Text()
		if m := regexp.MustCompile(`^Metrics on (http://\S+)/metrics`).FindStringSubmatch(line); m != nil {
			metricsURL = m[1]
		}
		if m := regexp.MustCompile(`^Serving \S+ on (\S+) \(plaintext\)`).FindStringSubmatch(line); m != nil {
			grpcAddr = m[1]
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if grpcAddr == "" || metricsURL == "" {
		t.Fatalf("did not see the serving banner (grpc %q metrics %q)", grpcAddr, metricsURL)
	}

	conn := dialServer(t, grpcAddr)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Served before any Refresh RPC: the server took its first snapshot at start.
	groups, err := protos.NewCloudProviderClient(conn).NodeGroups(ctx, &protos.NodeGroupsRequest{})
	if err != nil || len(groups.GetNodeGroups()) != 1 {
		t.Fatalf("NodeGroups = %v, %v", groups, err)
	}
	hr, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: protos.CloudProvider_ServiceDesc.ServiceName})
	if err != nil || hr.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health = %v, %v", hr, err)
	}
	for path, want := range map[string]string{
		"/readyz":  "ok",
		"/healthz": "ok",
		"/metrics": `cluster_autoscaler_provider_grpc_requests_total{code="OK",method="NodeGroups"} 1`,
	} {
		resp, err := http.Get(metricsURL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Fatalf("%s: %d, body lacks %q", path, resp.StatusCode, want)
		}
		if path == "/metrics" && !strings.Contains(string(body), `cluster_autoscaler_provider_node_group_size{kind="target",node_group="pool-a"} 2`) {
			t.Fatalf("/metrics lacks the node group size gauge")
		}
	}

	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := <-done; code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0", code)
	}
}

func TestOneLineKeepsJoinedErrorsApart(t *testing.T) {
	err := errors.Join(errors.New("cluster_id is required"), errors.New("token is required"))
	if got := oneLine(err); got != "cluster_id is required; token is required" {
		t.Fatalf("oneLine = %q", got)
	}
}

// dialServer connects to the gRPC server at addr in plaintext, as CA does;
// the connection closes when the test ends.
func dialServer(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// startRun runs the binary's run with args in this process until the test
// ends, when it must exit 0, and returns its standard output.
func startRun(t *testing.T, args []string) io.Reader {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		var errb strings.Builder
		done <- run(ctx, args, pw, &errb)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("server exit code %d", code)
		}
	})
	return pr
}

// simServer runs the binary with --simulate for provider on a free port and
// returns the gRPC address, the group the banner suggests scaling up, and the
// banner text. The server stops when the test ends.
func simServer(t *testing.T, provider string) (addr, group, banner string) {
	t.Helper()
	pr := startRun(t, []string{"--cloud-provider", provider, "--simulate", "--address", "127.0.0.1:0", "--metrics-address", ""})
	sc := bufio.NewScanner(pr)
	var b strings.Builder
	for sc.Scan() {
		line := sc.Text()
		b.WriteString(line + "\n")
		if m := regexp.MustCompile(`^Serving \S+ on (\S+) \(plaintext\)`).FindStringSubmatch(line); m != nil {
			addr = m[1]
		}
		if m := regexp.MustCompile(` --scale-up (\S+)=1$`).FindStringSubmatch(line); m != nil {
			group = m[1]
		}
		if strings.HasPrefix(line, "Point a Cluster Autoscaler here") {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if addr == "" || group == "" {
		t.Fatalf("banner lacks the address or the suggested scale-up:\n%s", b.String())
	}
	return addr, group, b.String()
}

// TestSimulateBannerAndInspect is the README's first run for each real
// provider: the banner, then a scale-up and a deletion through inspect.
func TestSimulateBannerAndInspect(t *testing.T) {
	for _, provider := range []string{"vultr", "volcengine", "exoscale"} {
		t.Run(provider, func(t *testing.T) {
			if _, ok := registry.Lookup(provider); !ok {
				t.Skipf("%s is not compiled in", provider)
			}
			addr, group, banner := simServer(t, provider)
			for _, want := range []string{
				"Simulated " + provider + " is ready",
				"Fake cloud API: http://127.0.0.1:",
				" inspect --address " + addr + "\n",
				" inspect --address " + addr + " --scale-up " + group + "=1\n",
			} {
				if !strings.Contains(banner, want) {
					t.Errorf("banner lacks %q:\n%s", want, banner)
				}
			}

			code, out, stderr := runArgs(t, "inspect", "--address", addr, "-o", "json", "--group", group, "--scale-up", group+"=1")
			if code != 0 {
				t.Fatalf("scale-up: exit %d %s\n%s", code, stderr, out)
			}
			var res inspect.Result
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatal(err)
			}
			before, after := res.Before.Groups[0], res.After.Groups[0]
			if after.Target != before.Target+1 {
				t.Fatalf("target %d -> %d after a scale-up of 1", before.Target, after.Target)
			}
			if before.Template == nil || before.Template.Capacity["cpu"] == "" {
				t.Fatalf("no usable template for %s: %s", group, before.TemplateNote)
			}
			victim := ""
			for _, in := range after.Instances {
				if in.State == "running" {
					victim = in.ProviderID
					break
				}
			}
			if victim == "" {
				t.Fatalf("no running instance to delete in %+v", after.Instances)
			}

			code, out, stderr = runArgs(t, "inspect", "--address", addr, "-o", "json", "--group", group, "--delete", victim)
			if code != 0 {
				t.Fatalf("delete: exit %d %s\n%s", code, stderr, out)
			}
			res = inspect.Result{}
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatal(err)
			}
			if got := res.After.Groups[0].Target; got != after.Target-1 {
				t.Fatalf("target %d after deleting one node of %d", got, after.Target)
			}
			for _, in := range res.After.Groups[0].Instances {
				if in.ProviderID == victim && in.State != "deleting" {
					t.Fatalf("deleted instance %s is %s", victim, in.State)
				}
			}
		})
	}
}

// TestUnmatchedNodesSpecExits2: a --nodes name the first listing does not
// find is a configuration error, reported at once with exit code 2.
func TestUnmatchedNodesSpecExits2(t *testing.T) {
	if _, ok := registry.Lookup("vultr"); !ok {
		t.Skip("vultr is not compiled in")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out, errb strings.Builder
	code := run(ctx, []string{"--cloud-provider", "vultr", "--simulate", "--nodes", "1:2:no-such-pool",
		"--address", "127.0.0.1:0", "--metrics-address", ""}, &out, &errb)
	if code != 2 || !strings.Contains(errb.String(), "1:2:no-such-pool") {
		t.Fatalf("exit %d, stderr %q; want 2 naming the spec", code, errb.String())
	}
}
