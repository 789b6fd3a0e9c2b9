package externalgrpc

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/metrics"
)

// TestMutationLoggedAndCounted: every change CA asks for is one log line at
// the default level (group, from -> to, instances, outcome, client) and one
// count by outcome; an unknown outcome shows in the quarantined-groups gauge
// until its window has passed.
func TestMutationLoggedAndCounted(t *testing.T) {
	buf := cloudprovidertest.CaptureKlog(t)
	clock := cloudprovidertest.MutationClock()
	p := cloudprovidertest.SeededProvider(t, cloudprovidertest.GuardOptions(clock))
	reg := prometheus.NewRegistry()
	client, srv := startServer(t, p, Options{Metrics: metrics.New(reg)})
	if err := srv.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	gauge := func(want float64) {
		t.Helper()
		if got := cloudprovidertest.MetricValue(t, reg, "cluster_autoscaler_provider_quarantined_node_groups", nil); got != want {
			t.Fatalf("quarantined_node_groups = %v, want %v", got, want)
		}
	}
	count := func(group, op, outcome string) float64 {
		t.Helper()
		return cloudprovidertest.MetricValue(t, reg, "cluster_autoscaler_provider_mutations_total", map[string]string{"node_group": group, "operation": op, "outcome": outcome})
	}

	if _, err := client.NodeGroupIncreaseSize(rpcCtx(t), &protos.NodeGroupIncreaseSizeRequest{Id: "pool-a", Delta: 1}); err != nil {
		t.Fatal(err)
	}
	klog.Flush()
	if !strings.Contains(buf.String(), `"Node group changed" nodeGroup="pool-a" operation="increase" from=2 to=3 outcome="applied" client="cluster-autoscaler"`) {
		t.Fatalf("no log line for the applied increase:\n%s", buf.String())
	}
	if count("pool-a", "increase", "applied") != 1 {
		t.Fatal("applied increase not counted")
	}
	gauge(0)

	// The cloud's answer to the next request is lost.
	p.Cloud().FailNext(1)
	_, err := client.NodeGroupIncreaseSize(rpcCtx(t), &protos.NodeGroupIncreaseSizeRequest{Id: "pool-a", Delta: 1})
	if err == nil {
		t.Fatal("the lost answer was not reported")
	}
	klog.Flush()
	if !strings.Contains(buf.String(), `nodeGroup="pool-a" operation="increase" from=3 to=4 outcome="unknown"`) {
		t.Fatalf("no log line for the unknown outcome:\n%s", buf.String())
	}
	if count("pool-a", "increase", "unknown") != 1 {
		t.Fatal("unknown outcome not counted")
	}
	gauge(1)

	// A malformed request is refused before any call, and counted so.
	_, err = client.NodeGroupDeleteNodes(rpcCtx(t), &protos.NodeGroupDeleteNodesRequest{Id: "pool-b"})
	wantCode(t, err, codes.InvalidArgument, "empty delete")
	if count("pool-b", "delete", "refused") != 1 {
		t.Fatal("refused delete not counted")
	}

	cloudprovidertest.PassUnknownOutcomeWindow(clock)
	if err := srv.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	gauge(0)
}

// TestToolsIdentifiedInMutationLog: a change sent by this binary's inspect
// command is logged with that client, not as a Cluster Autoscaler.
func TestToolsIdentifiedInMutationLog(t *testing.T) {
	buf := cloudprovidertest.CaptureKlog(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(cloudprovidertest.SeededProvider(t, groupstate.GuardOptions{}), Options{})
	gs := grpc.NewServer(grpc.ChainUnaryInterceptor(UnaryInterceptor(nil)))
	protos.RegisterCloudProviderServer(gs, srv)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithUserAgent(ToolUserAgentPrefix+"inspect"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := protos.NewCloudProviderClient(conn).NodeGroupIncreaseSize(rpcCtx(t), &protos.NodeGroupIncreaseSizeRequest{Id: "pool-a", Delta: 1}); err != nil {
		t.Fatal(err)
	}
	klog.Flush()
	for _, want := range []string{`outcome="applied" client="inspect"`, `"Connection from this binary's inspect command (not a Cluster Autoscaler)"`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, buf.String())
		}
	}
}
