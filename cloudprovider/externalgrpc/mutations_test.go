package externalgrpc

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/metrics"
)

// guardedProvider wraps the in-memory provider's groups so their increases
// run through a real MutationGuard, with a scripted error for the next call.
type guardedProvider struct {
	*cloudprovidertest.InMemoryProvider
	mu     sync.Mutex
	guards map[string]*groupstate.MutationGuard
	// guardOpts are the guards' options (a manual clock).
	guardOpts groupstate.GuardOptions
	next      error
}

type guardedGroup struct {
	cloudprovider.NodeGroup
	p     *guardedProvider
	guard *groupstate.MutationGuard
}

func (p *guardedProvider) NodeGroups(ctx context.Context) ([]cloudprovider.NodeGroup, error) {
	groups, err := p.InMemoryProvider.NodeGroups(ctx)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]cloudprovider.NodeGroup, len(groups))
	for i, g := range groups {
		id := g.Id(ctx)
		if p.guards[id] == nil {
			p.guards[id] = groupstate.NewMutationGuard(id, p.guardOpts)
		}
		out[i] = guardedGroup{NodeGroup: g, p: p, guard: p.guards[id]}
	}
	return out, nil
}

func (p *guardedProvider) NodeGroup(ctx context.Context, id string) (cloudprovider.NodeGroup, error) {
	groups, err := p.NodeGroups(ctx)
	return cloudprovidertest.ScanNodeGroup(ctx, groups, err, id)
}

func (g guardedGroup) IncreaseSize(ctx context.Context, delta int) error {
	call := func(ctx context.Context) error {
		g.p.mu.Lock()
		err := g.p.next
		g.p.next = nil
		g.p.mu.Unlock()
		if err != nil {
			// The injected answer stands for a request that reached the cloud.
			cloudhttp.MarkSent(ctx)
			return err
		}
		return g.NodeGroup.IncreaseSize(ctx, delta)
	}
	return g.guard.Do(ctx, groupstate.Mutation{
		Plan: func() (groupstate.Plan, error) { return groupstate.Plan{Call: call}, nil },
		Read: func(context.Context) error { return nil },
	})
}

func (g guardedGroup) Status(ctx context.Context) cloudprovider.GroupStatus {
	st := g.NodeGroup.Status(ctx)
	st.QuarantinedUntil = g.guard.QuarantinedUntil()
	return st
}

// TestMutationLoggedAndCounted: every change CA asks for is one log line at
// the default level (group, from -> to, instances, outcome, client) and one
// count by outcome; an unknown outcome shows in the quarantined-groups gauge
// until its window has passed.
func TestMutationLoggedAndCounted(t *testing.T) {
	buf := cloudprovidertest.CaptureKlog(t)
	clock := cloudprovidertest.MutationClock()
	p := &guardedProvider{InMemoryProvider: cloudprovidertest.SeededProvider(t, groupstate.GuardOptions{}), guards: map[string]*groupstate.MutationGuard{},
		guardOpts: cloudprovidertest.GuardOptions(clock)}
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

	p.mu.Lock()
	p.next = &cloudhttp.APIError{Cloud: "test", Operation: "PATCH /pools/{id}", Class: cloudprovider.ErrUnavailable}
	p.mu.Unlock()
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
