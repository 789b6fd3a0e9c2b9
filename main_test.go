package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
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
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/inspect"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
)

const testProvider = "zz-inmemory-test"

func init() {
	cloudprovider.RegisterCloudProvider(testProvider, cloudprovider.Registration{
		Build: func(ctx context.Context, opts cloudprovider.BuildOptions) (cloudprovider.CloudProvider, error) {
			if opts.CloudConfig == "" {
				return nil, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "--cloud-config is required")
			}
			return cloudprovidertest.NewInMemoryProvider(cloudprovidertest.NewInMemoryCloud()), nil
		},
		Simulate: func(ctx context.Context, opts cloudprovider.BuildOptions) (*cloudprovider.Simulation, error) {
			p := cloudprovidertest.NewInMemoryProvider(cloudprovidertest.NewInMemoryCloud(
				cloudprovidertest.CloudGroup{ID: "pool-a", Min: 1, Max: 5, Running: 2}))
			return &cloudprovider.Simulation{Provider: p, URL: "memory://", Description: "one in-memory pool", Close: func() {}}, nil
		},
	})
}

func runArgs(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb strings.Builder
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
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
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runArgs(t, tc.args...)
			if code == 0 {
				t.Fatal("exit code 0, want non-zero")
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

	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
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

// simServer runs the binary with --simulate for provider on a free port and
// returns the gRPC address, the group the banner suggests scaling up, and the
// banner text. The server stops when the test ends.
func simServer(t *testing.T, provider string) (addr, group, banner string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		var errb strings.Builder
		done <- run(ctx, []string{"--cloud-provider", provider, "--simulate", "--address", "127.0.0.1:0", "--metrics-address", ""}, pw, &errb)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("server exit code %d", code)
		}
	})
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
			if _, ok := cloudprovider.Lookup(provider); !ok {
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

func TestSelfCommand(t *testing.T) {
	cases := map[string]string{
		"/tmp/go-build123/b001/exe/cluster-autoscaler-provider": "go run .",
		"./bin/cluster-autoscaler-provider":                     "./bin/cluster-autoscaler-provider",
		"cluster-autoscaler-provider":                           "cluster-autoscaler-provider",
	}
	for in, want := range cases {
		t.Run(in, func(t *testing.T) {
			if got := selfCommand(in); got != want {
				t.Fatalf("selfCommand(%q) = %q, want %q", in, got, want)
			}
		})
	}
}

func TestBannerSuggestsWorkingCommands(t *testing.T) {
	cloud := cloudprovidertest.NewInMemoryCloud(
		cloudprovidertest.CloudGroup{ID: "full", Min: 1, Max: 2, Running: 2},
		cloudprovidertest.CloudGroup{ID: "roomy", Min: 0, Max: 9, Running: 1},
		cloudprovidertest.CloudGroup{ID: "some", Min: 0, Max: 3, Running: 0},
	)
	p := cloudprovidertest.NewInMemoryProvider(cloud)
	if err := p.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		cfg      config
		address  string
		tls      bool
		want     []string
		unwanted []string
	}{
		{"default address", config{provider: "vultr"}, "127.0.0.1:8086", false,
			[]string{"Simulated vultr is ready", "  go run . inspect\n", "  go run . inspect --scale-up roomy=1\n", "\"address: 127.0.0.1:8086\""}, []string{"--address"}},
		{"other address", config{provider: "exoscale"}, "unix:///run/cap.sock", false,
			[]string{"  go run . inspect --address unix:///run/cap.sock --scale-up roomy=1\n"}, []string{"--tls"}},
		{"TLS", config{provider: "exoscale"}, "127.0.0.1:8086", true,
			[]string{"inspect --tls-ca-file <CA of the server certificate> --scale-up roomy=1\n"}, []string{"--tls-cert-file"}},
		{"mTLS", config{provider: "exoscale", tlsClientCA: "ca.pem"}, "127.0.0.1:8086", true,
			[]string{"--tls-ca-file <CA of the server certificate> --tls-cert-file <client cert> --tls-key-file <client key> --scale-up roomy=1\n"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			printBanner(context.Background(), &b, "go run .", &tc.cfg, p, tc.address, tc.tls)
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("banner lacks %q", w)
				}
			}
			for _, u := range tc.unwanted {
				if strings.Contains(b.String(), u) {
					t.Errorf("banner has %q", u)
				}
			}
			if t.Failed() {
				t.Log(b.String())
			}
		})
	}
}

// TestUnmatchedNodesSpecExits2: a --nodes name the first listing does not
// find is a configuration error, reported at once with exit code 2.
func TestUnmatchedNodesSpecExits2(t *testing.T) {
	if _, ok := cloudprovider.Lookup("vultr"); !ok {
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
