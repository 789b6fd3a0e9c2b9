package exoscale

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	v3 "github.com/exoscale/egoscale/v3"
	"github.com/exoscale/egoscale/v3/credentials"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/grpctest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

func TestSimulate(t *testing.T) {
	t.Parallel()
	sim, err := Simulate(ctx5s(t), registry.BuildOptions{UserAgent: "sim-test"})
	if err != nil {
		t.Fatalf("Simulate: %v", err)
	}
	t.Cleanup(sim.Close)
	ctx := ctx5s(t)
	if err := sim.Provider.Refresh(ctx); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	groups, _ := sim.Provider.NodeGroups(ctx)
	if len(groups) != 3 {
		t.Fatalf("simulation serves %d groups, want 3 (workers, gpu, batch)", len(groups))
	}
	var workers cloudprovider.NodeGroup
	for _, g := range groups {
		if strings.Contains(g.Debug(ctx), "nodepool workers") {
			workers = g
		}
	}
	if workers == nil {
		t.Fatal("no workers group")
	}
	if err := workers.IncreaseSize(ctx, 1); err != nil {
		t.Fatalf("IncreaseSize: %v", err)
	}
	if n, _ := workers.TargetSize(ctx); n != 3 {
		t.Fatalf("target after scale-up = %d, want 3", n)
	}
	members, _ := workers.Nodes(ctx)
	if err := workers.DeleteNodes(ctx, []*corev1.Node{node(members[0].Id)}); err != nil {
		t.Fatalf("DeleteNodes: %v", err)
	}
	if err := sim.Provider.Refresh(ctx); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	if n, _ := workers.TargetSize(ctx); n != 2 {
		t.Fatalf("target after scale-up and eviction = %d, want 2", n)
	}
}

// TestScaleUpAndEvictionThroughGRPC drives the provider through the
// externalgrpc server as CA would: a scale-up that the fake carries out
// (creating, then running) and an eviction (deleting, then gone).
func TestScaleUpAndEvictionThroughGRPC(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, defaultEnvOptions())
	c := grpctest.Serve(t, e.provider, externalgrpc.Options{})
	refresh := func() {
		t.Helper()
		if _, err := c.Refresh(ctx5s(t), &protos.RefreshRequest{}); err != nil {
			t.Fatalf("Refresh: %v", err)
		}
	}
	states := func() (map[protos.InstanceStatus_InstanceState]int, []string) {
		t.Helper()
		resp, err := c.NodeGroupNodes(ctx5s(t), &protos.NodeGroupNodesRequest{Id: e.workersPool})
		if err != nil {
			t.Fatal(err)
		}
		m := map[protos.InstanceStatus_InstanceState]int{}
		var ids []string
		for _, in := range resp.GetInstances() {
			m[in.GetStatus().GetInstanceState()]++
			ids = append(ids, in.GetId())
		}
		return m, ids
	}
	target := func() int32 {
		t.Helper()
		resp, err := c.NodeGroupTargetSize(ctx5s(t), &protos.NodeGroupTargetSizeRequest{Id: e.workersPool})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetTargetSize()
	}
	refresh()
	groups, err := c.NodeGroups(ctx5s(t), &protos.NodeGroupsRequest{})
	if err != nil || len(groups.GetNodeGroups()) != 4 {
		t.Fatalf("NodeGroups: %v, %v", groups, err)
	}

	if _, err := c.NodeGroupIncreaseSize(ctx5s(t), &protos.NodeGroupIncreaseSizeRequest{Id: e.workersPool, Delta: 2}); err != nil {
		t.Fatalf("IncreaseSize: %v", err)
	}
	if got := target(); got != 5 {
		t.Fatalf("target right after IncreaseSize = %d, want 5", got)
	}
	refresh()
	if m, _ := states(); m[protos.InstanceStatus_instanceCreating] != 2 || m[protos.InstanceStatus_instanceRunning] != 3 {
		t.Fatalf("after scale-up: %v, want 2 creating and 3 running", m)
	}
	e.clock.Advance(2 * time.Minute)
	refresh()
	m, ids := states()
	if m[protos.InstanceStatus_instanceRunning] != 5 {
		t.Fatalf("after provisioning: %v, want 5 running", m)
	}

	victim := ids[0]
	if _, err := c.NodeGroupDeleteNodes(ctx5s(t), &protos.NodeGroupDeleteNodesRequest{Id: e.workersPool, Nodes: []*protos.ExternalGrpcNode{{ProviderID: victim, Name: "node-0"}}}); err != nil {
		t.Fatalf("DeleteNodes: %v", err)
	}
	if got := target(); got != 4 {
		t.Fatalf("target right after DeleteNodes = %d, want 4", got)
	}
	if m, _ := states(); m[protos.InstanceStatus_instanceDeleting] != 1 {
		t.Fatalf("after eviction: %v, want 1 deleting", m)
	}
	e.clock.Advance(time.Minute)
	refresh()
	if m, ids := states(); m[protos.InstanceStatus_instanceRunning] != 4 || len(ids) != 4 {
		t.Fatalf("after removal: %v (%d instances), want 4 running", m, len(ids))
	}
	if v, ok := e.fake.Instance(strings.TrimPrefix(victim, ProviderIDPrefix)); ok {
		t.Fatalf("the fake still has the evicted instance: %+v", v)
	}

	tpl, err := c.NodeGroupTemplateNodeInfo(ctx5s(t), &protos.NodeGroupTemplateNodeInfoRequest{Id: e.gpuPool})
	if err != nil {
		t.Fatalf("TemplateNodeInfo: %v", err)
	}
	var n corev1.Node
	if err := n.Unmarshal(tpl.GetNodeBytes()); err != nil || n.Labels[LabelGPUType] != "gpua5000" {
		t.Fatalf("template node: %v, labels %v", err, n.Labels)
	}

	for _, tc := range []struct {
		name string
		call func() error
		want codes.Code
	}{
		{"increase past max", func() error {
			_, err := c.NodeGroupIncreaseSize(ctx5s(t), &protos.NodeGroupIncreaseSizeRequest{Id: e.workersPool, Delta: 100})
			return err
		}, codes.FailedPrecondition},
		{"unknown group", func() error {
			_, err := c.NodeGroupTargetSize(ctx5s(t), &protos.NodeGroupTargetSizeRequest{Id: "nope"})
			return err
		}, codes.NotFound},
		{"foreign node", func() error {
			_, err := c.NodeGroupDeleteNodes(ctx5s(t), &protos.NodeGroupDeleteNodesRequest{Id: e.workersPool, Nodes: []*protos.ExternalGrpcNode{{ProviderID: "aws:///i-1"}}})
			return err
		}, codes.InvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := status.Code(tc.call()); got != tc.want {
				t.Fatalf("code %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSimulateBannerNamesGroupsWithStableIDs: commands pasted from the banner
// name group ids, so a restart must bring the same ids back, and the banner
// shows each group's name next to its id.
func TestSimulateBannerNamesGroupsWithStableIDs(t *testing.T) {
	t.Parallel()
	start := func() (ids []string, description string) {
		sim, err := Simulate(ctx5s(t), registry.BuildOptions{})
		if err != nil {
			t.Fatalf("Simulate: %v", err)
		}
		defer sim.Close()
		ctx := ctx5s(t)
		if err := sim.Provider.Refresh(ctx); err != nil {
			t.Fatalf("Refresh: %v", err)
		}
		groups, _ := sim.Provider.NodeGroups(ctx)
		for _, g := range groups {
			ids = append(ids, g.Id(ctx))
			if !strings.Contains(sim.Description, g.Id(ctx)) {
				t.Errorf("banner %q lacks group id %s", sim.Description, g.Id(ctx))
			}
			if name := sim.GroupNames[g.Id(ctx)]; name == "" || !strings.Contains(g.Debug(ctx), name) {
				t.Errorf("GroupNames gives %q for %s", name, g.Debug(ctx))
			}
		}
		slices.Sort(ids)
		return ids, sim.Description
	}
	first, description := start()
	second, _ := start()
	if !slices.Equal(first, second) || len(first) != 3 {
		t.Fatalf("group ids %v then %v, want the same three", first, second)
	}
	for _, name := range []string{"workers ", "gpu ", "batch "} {
		if !strings.Contains(description, name) {
			t.Errorf("banner %q lacks group name %q", description, name)
		}
	}
}

// TestSimulateUnderExamplePolicy: the demo key holds only the example role
// policy's rights, so an operation the provider never calls (get-instance)
// is refused 403, signed with the demo's own key.
func TestSimulateUnderExamplePolicy(t *testing.T) {
	t.Parallel()
	sim, err := Simulate(ctx5s(t), registry.BuildOptions{UserAgent: "sim-test"})
	if err != nil {
		t.Fatalf("Simulate: %v", err)
	}
	t.Cleanup(sim.Close)
	c, err := v3.NewClient(credentials.NewStaticCredentials(simAPIKey, simAPISecret),
		v3.ClientOptWithEndpoint(v3.Endpoint(sim.URL)), v3.ClientOptWithHTTPClient(&http.Client{}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListInstancePools(ctx5s(t)); err != nil {
		t.Fatalf("list-instance-pools, which the policy allows: %v", err)
	}
	if _, err := c.GetInstance(ctx5s(t), v3.UUID("00000000-0000-4000-8000-000000000001")); !errors.Is(err, v3.ErrForbidden) {
		t.Fatalf("get-instance under the example policy: %v, want 403 Forbidden", err)
	}
}
