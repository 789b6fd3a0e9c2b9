package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/hack/bench/cluster"
)

// Environment of the child process: the child runs run() with these args.
const (
	secretChildEnv = "CAP_SECRET_HYGIENE_CHILD"
	secretArgsEnv  = "CAP_SECRET_HYGIENE_ARGS"
)

// secretCase is a provider with the known credentials its --simulate reads
// from the environment.
type secretCase struct {
	provider string
	env      map[string]string
}

func (c secretCase) secrets() []string {
	var out []string
	for _, v := range c.env {
		out = append(out, v)
	}
	return out
}

var secretCases = []secretCase{
	{"vultr", map[string]string{"VULTR_API_KEY": "VULTRKNOWNtoken0123456789abcdef"}},
	{"volcengine", map[string]string{"ACCESS_KEY": "AKLTKNOWNaccess0123456789", "SECRET_KEY": "VOLCKNOWNsecret0123456789abcdef"}},
	{"exoscale", map[string]string{"EXOSCALE_API_KEY": "EXOKNOWNkey0123456789abcd", "EXOSCALE_API_SECRET": "EXOKNOWNsecret0123456789abcdef"}},
}

// TestSecretHygieneChild is the provider binary when the parent test starts
// this test binary as a child; otherwise it skips.
func TestSecretHygieneChild(t *testing.T) {
	if os.Getenv(secretChildEnv) != "1" {
		t.Skip("helper process for TestSecretHygiene")
	}
	args := strings.Split(os.Getenv(secretArgsEnv), "\x1f")
	os.Exit(run(context.Background(), args, os.Stdout, os.Stderr))
}

// lockedBuffer collects the child's stderr, written from exec's goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// encodings are the forms a credential could leak in.
func encodings(secret string) []string {
	b := []byte(secret)
	return []string{
		secret,
		base64.StdEncoding.EncodeToString(b), base64.RawStdEncoding.EncodeToString(b),
		base64.URLEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b),
	}
}

// TestSecretHygiene runs the binary with --v=10 against each provider's
// --simulate with known credentials, performs every RPC including failing
// ones, reads /metrics, /healthz, /readyz and /debug paths, stops it, and
// fails if a credential (or its base64) appears in the logs, stdout, RPC
// answers and errors, or HTTP output.
func TestSecretHygiene(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the binary three times")
	}
	for _, tc := range secretCases {
		t.Run(tc.provider, func(t *testing.T) {
			var env []string
			for k, v := range tc.env {
				env = append(env, k+"="+v)
			}
			args := []string{"--cloud-provider", tc.provider, "--simulate", "--v=10",
				"--address", "127.0.0.1:0", "--metrics-address", "127.0.0.1:0"}
			env = append(env, secretChildEnv+"=1", secretArgsEnv+"="+strings.Join(args, "\x1f"))
			stderr := &lockedBuffer{}
			ctx := context.Background()
			proc, err := cluster.StartProcess(ctx, os.Args[0], []string{"-test.run=^TestSecretHygieneChild$"}, env, stderr, time.Minute)
			if err != nil {
				t.Fatalf("start: %v\nstderr:\n%s", err, stderr.String())
			}
			stopped := false
			defer func() {
				if !stopped {
					_ = proc.Stop(5 * time.Second)
				}
			}()
			var seen bytes.Buffer
			rpcs, failed := exerciseAllRPCs(t, proc.GRPCAddr, &seen)
			if rpcs < 20 || failed == 0 {
				t.Fatalf("exercised %d RPCs with %d failures; want every RPC, failing ones included", rpcs, failed)
			}
			base := strings.TrimSuffix(proc.MetricsURL, "/metrics")
			for _, path := range []string{"/metrics", "/healthz", "/readyz", "/debug", "/debug/vars", "/debug/pprof/", "/debug/pprof/cmdline", "/config", "/"} {
				body := httpGet(t, base+path)
				fmt.Fprintf(&seen, "GET %s\n%s\n", path, body)
				if path == "/metrics" && !strings.Contains(body, "cluster_autoscaler_provider_cloud_requests_total") {
					t.Fatalf("/metrics shows no cloud request: the provider never reached its fake cloud")
				}
			}
			if err := proc.Stop(10 * time.Second); err != nil {
				t.Logf("child exit: %v", err)
			}
			stopped = true
			logs := stderr.String()
			if !strings.Contains(logs, "] \"") || len(logs) < 1000 {
				t.Fatalf("the child logged almost nothing at --v=10 (%d bytes); the scan would prove nothing", len(logs))
			}
			corpus := map[string]string{"logs (stderr)": logs, "stdout": proc.Stdout(), "RPC answers and errors, HTTP output": seen.String()}
			for _, secret := range tc.secrets() {
				for _, form := range encodings(secret) {
					for where, text := range corpus {
						if i := strings.Index(text, form); i >= 0 {
							lo, hi := max(0, i-120), min(len(text), i+len(form)+40)
							t.Errorf("credential (as %q) appears in %s: ...%s...", form[:6]+"…", where, text[lo:hi])
						}
					}
				}
			}
		})
	}
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.Status + "\n" + string(b)
}

// exerciseAllRPCs calls all 15 RPCs, with valid and invalid arguments, and
// writes every answer and error to seen. It returns the counts of calls and
// failures.
func exerciseAllRPCs(t *testing.T, addr string, seen io.Writer) (calls, failed int) {
	t.Helper()
	conn := dialServer(t, addr)
	c := protos.NewCloudProviderClient(conn)
	do := func(name string, f func(context.Context) (proto.Message, error)) proto.Message {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := f(ctx)
		calls++
		if err != nil {
			failed++
			fmt.Fprintf(seen, "%s error: %v\n", name, err)
			return nil
		}
		fmt.Fprintf(seen, "%s: %s\n", name, prototext.Format(resp))
		return resp
	}
	window := func() (*timestamppb.Timestamp, *timestamppb.Timestamp) {
		now := time.Now()
		return timestamppb.New(now), timestamppb.New(now.Add(time.Hour))
	}
	do("Refresh", func(ctx context.Context) (proto.Message, error) { return c.Refresh(ctx, &protos.RefreshRequest{}) })
	groups, _ := do("NodeGroups", func(ctx context.Context) (proto.Message, error) {
		return c.NodeGroups(ctx, &protos.NodeGroupsRequest{})
	}).(*protos.NodeGroupsResponse)
	do("GPULabel", func(ctx context.Context) (proto.Message, error) { return c.GPULabel(ctx, &protos.GPULabelRequest{}) })
	do("GetAvailableGPUTypes", func(ctx context.Context) (proto.Message, error) {
		return c.GetAvailableGPUTypes(ctx, &protos.GetAvailableGPUTypesRequest{})
	})
	ids := []string{"no-such-group", ""}
	for _, g := range groups.GetNodeGroups() {
		ids = append(ids, g.GetId())
	}
	foreign := &protos.ExternalGrpcNode{ProviderID: "aws:///us-east-1a/i-0123", Name: "foreign"}
	for _, id := range ids {
		do("NodeGroupTargetSize", func(ctx context.Context) (proto.Message, error) {
			return c.NodeGroupTargetSize(ctx, &protos.NodeGroupTargetSizeRequest{Id: id})
		})
		nodes, _ := do("NodeGroupNodes", func(ctx context.Context) (proto.Message, error) {
			return c.NodeGroupNodes(ctx, &protos.NodeGroupNodesRequest{Id: id})
		}).(*protos.NodeGroupNodesResponse)
		do("NodeGroupTemplateNodeInfo", func(ctx context.Context) (proto.Message, error) {
			return c.NodeGroupTemplateNodeInfo(ctx, &protos.NodeGroupTemplateNodeInfoRequest{Id: id})
		})
		do("NodeGroupGetOptions", func(ctx context.Context) (proto.Message, error) {
			return c.NodeGroupGetOptions(ctx, &protos.NodeGroupAutoscalingOptionsRequest{Id: id, Defaults: &protos.NodeGroupAutoscalingOptions{
				ScaleDownUtilizationThreshold: 0.5, MaxNodeProvisionDuration: durationpb.New(15 * time.Minute)}})
		})
		for _, delta := range []int32{1, 0, 1000} {
			do("NodeGroupIncreaseSize", func(ctx context.Context) (proto.Message, error) {
				return c.NodeGroupIncreaseSize(ctx, &protos.NodeGroupIncreaseSizeRequest{Id: id, Delta: delta})
			})
		}
		for _, delta := range []int32{-1, 1, -1000} {
			do("NodeGroupDecreaseTargetSize", func(ctx context.Context) (proto.Message, error) {
				return c.NodeGroupDecreaseTargetSize(ctx, &protos.NodeGroupDecreaseTargetSizeRequest{Id: id, Delta: delta})
			})
		}
		do("NodeGroupDeleteNodes", func(ctx context.Context) (proto.Message, error) {
			return c.NodeGroupDeleteNodes(ctx, &protos.NodeGroupDeleteNodesRequest{Id: id, Nodes: []*protos.ExternalGrpcNode{foreign}})
		})
		do("NodeGroupDeleteNodes", func(ctx context.Context) (proto.Message, error) {
			return c.NodeGroupDeleteNodes(ctx, &protos.NodeGroupDeleteNodesRequest{Id: id})
		})
		for i, in := range nodes.GetInstances() {
			n := &protos.ExternalGrpcNode{ProviderID: in.GetId(), Name: fmt.Sprintf("node-%d", i), Labels: map[string]string{"kubernetes.io/os": "linux"}}
			do("NodeGroupForNode", func(ctx context.Context) (proto.Message, error) {
				return c.NodeGroupForNode(ctx, &protos.NodeGroupForNodeRequest{Node: n})
			})
			start, end := window()
			do("PricingNodePrice", func(ctx context.Context) (proto.Message, error) {
				return c.PricingNodePrice(ctx, &protos.PricingNodePriceRequest{Node: n, StartTimestamp: start, EndTimestamp: end})
			})
			if i == 0 {
				do("NodeGroupDeleteNodes", func(ctx context.Context) (proto.Message, error) {
					return c.NodeGroupDeleteNodes(ctx, &protos.NodeGroupDeleteNodesRequest{Id: id, Nodes: []*protos.ExternalGrpcNode{n}})
				})
			}
		}
	}
	do("NodeGroupForNode", func(ctx context.Context) (proto.Message, error) {
		return c.NodeGroupForNode(ctx, &protos.NodeGroupForNodeRequest{Node: foreign})
	})
	do("NodeGroupForNode", func(ctx context.Context) (proto.Message, error) {
		return c.NodeGroupForNode(ctx, &protos.NodeGroupForNodeRequest{})
	})
	start, end := window()
	do("PricingNodePrice", func(ctx context.Context) (proto.Message, error) {
		return c.PricingNodePrice(ctx, &protos.PricingNodePriceRequest{Node: foreign, StartTimestamp: end, EndTimestamp: start})
	})
	do("PricingPodPrice", func(ctx context.Context) (proto.Message, error) {
		return c.PricingPodPrice(ctx, &protos.PricingPodPriceRequest{PodBytes: []byte("not a pod"), StartTimestamp: start, EndTimestamp: end})
	})
	do("PricingPodPrice", func(ctx context.Context) (proto.Message, error) {
		return c.PricingPodPrice(ctx, &protos.PricingPodPriceRequest{StartTimestamp: start, EndTimestamp: end})
	})
	do("Refresh", func(ctx context.Context) (proto.Message, error) { return c.Refresh(ctx, &protos.RefreshRequest{}) })
	do("Cleanup", func(ctx context.Context) (proto.Message, error) { return c.Cleanup(ctx, &protos.CleanupRequest{}) })
	// CA reconnects after Cleanup; the server keeps serving.
	do("NodeGroups", func(ctx context.Context) (proto.Message, error) {
		return c.NodeGroups(ctx, &protos.NodeGroupsRequest{})
	})
	return calls, failed
}
